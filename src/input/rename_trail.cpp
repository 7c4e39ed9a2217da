#include "input/rename_trail.h"

#include <algorithm>

namespace swthrottle::input {

void RenameTrail::begin_round() {
  touched_.clear();
  at_name_.clear();
  for (const Generation& g : waiting_)
    if (g.at == name_) at_name_.push_back(g.id);
}

void RenameTrail::touch(std::string_view name) {
  if (std::find(touched_.begin(), touched_.end(), name) == touched_.end()) touched_.emplace_back(name);
}

bool RenameTrail::touched(std::string_view name) const {
  return std::find(touched_.begin(), touched_.end(), name) != touched_.end();
}

void RenameTrail::gone_at(std::string_view name) {
  std::erase_if(waiting_, [&](const Generation& g) { return g.at == name; });
}

// The kernel queues the two halves of a rename within the directory one
// right after the other: a half move still open when another event comes
// took its file out of the directory.
void RenameTrail::moved_out(uint32_t unless_cookie) {
  std::erase_if(waiting_, [&](const Generation& g) { return g.at.empty() && g.cookie != unless_cookie; });
}

void RenameTrail::created(std::string_view name) {
  moved_out(0);
  touch(name);
  gone_at(name);  // nothing was there, by the kernel's word; a stale entry is
  if (name != name_) return;
  at_name_.push_back(next_id_);
  waiting_.push_back(Generation{next_id_++, std::string(name), 0});
  if (waiting_.size() > kMax) waiting_.pop_front();
}

void RenameTrail::moved_from(std::string_view name, uint32_t cookie) {
  moved_out(0);
  touch(name);
  for (Generation& g : waiting_) {
    if (g.at != name) continue;
    g.at.clear();
    g.cookie = cookie;
  }
}

void RenameTrail::moved_to(std::string_view name, uint32_t cookie) {
  moved_out(cookie);
  touch(name);
  gone_at(name);  // a file moved over another replaces it
  bool carried = false;
  for (Generation& g : waiting_) {
    if (!g.at.empty() || g.cookie != cookie) continue;
    g.at = std::string(name);
    g.cookie = 0;
    carried = true;
    if (name == name_) at_name_.push_back(g.id);
  }
  // A file moved to the name from elsewhere is a generation of its own (one
  // of ours moved back is the same one, carried above).
  if (!carried && name == name_) {
    at_name_.push_back(next_id_);
    waiting_.push_back(Generation{next_id_++, std::string(name), 0});
    if (waiting_.size() > kMax) waiting_.pop_front();
  }
}

void RenameTrail::deleted(std::string_view name) {
  moved_out(0);
  touch(name);
  gone_at(name);
}

void RenameTrail::reset() {
  waiting_.clear();
  touched_.clear();
  at_name_.clear();
}

void RenameTrail::taken(uint64_t id) {
  std::erase_if(waiting_, [&](const Generation& g) { return g.id == id; });
}

void RenameTrail::drop_before(uint64_t id) {
  std::erase_if(waiting_, [&](const Generation& g) { return g.id < id; });
}

}  // namespace swthrottle::input
