// RenameTrail: where the files that appeared at one name of a directory are
// now, read from the directory's inotify events, for NameWatcher
// (name_watcher.h). Pure: events in, names out.
//
// Each file created at the name, or moved to it, is a generation. The
// events that follow say where it went: a move within the directory carries
// it to its new name (app.log -> app.log.1 -> app.log.2), a deletion, a move
// over it or a move out of the directory ends it. So a generation that was
// renamed away before anyone could open it at the name is still found, at
// the name the trail gives, until it is deleted or overwritten.
//
// The trail is only as good as the events: after a queue overflow nothing is
// known (reset()), and a move whose other half has not been read yet leaves
// its generation without a name until it comes.
//
// touched(): whether an event since the last begin_round() named a name, for
// the caller's check that a file it opened by name between two reads of
// events is the generation the trail meant (no event touched that name in
// between: then nothing can have changed there). at_name_in_round(): the
// generations that were at the followed name at some moment since then, of
// which a file someone else opened at the name in that time must be one.
//
// Not thread-safe: one per watcher, on its thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace swthrottle::input {

class RenameTrail {
 public:
  // Generations followed at once; older ones are given up beyond it.
  static constexpr std::size_t kMax = 64;

  struct Generation {
    uint64_t id = 0;
    std::string at;       // where it is now ("" while a move of it is half read)
    uint32_t cookie = 0;  // the move it is in, while `at` is ""
  };

  explicit RenameTrail(std::string name) : name_(std::move(name)) {}

  // The directory's events, in the order inotify gives them.
  void created(std::string_view name);                      // IN_CREATE
  void moved_from(std::string_view name, uint32_t cookie);  // IN_MOVED_FROM
  void moved_to(std::string_view name, uint32_t cookie);    // IN_MOVED_TO
  void deleted(std::string_view name);                      // IN_DELETE
  void reset();                                             // IN_Q_OVERFLOW: forget every generation

  // The generations nobody has taken yet, oldest first.
  const std::deque<Generation>& waiting() const { return waiting_; }
  // Generation `id` was opened (or found not worth it): followed no more.
  void taken(uint64_t id);
  // The generations older than `id` (created before it) are followed no more.
  void drop_before(uint64_t id);

  void begin_round();
  bool touched(std::string_view name) const;
  const std::vector<uint64_t>& at_name_in_round() const { return at_name_; }

 private:
  void touch(std::string_view name);
  void gone_at(std::string_view name);  // what was at `name` is gone (deleted or overwritten)
  void moved_out(uint32_t unless_cookie);

  const std::string name_;
  std::deque<Generation> waiting_;
  uint64_t next_id_ = 1;
  std::vector<std::string> touched_;
  std::vector<uint64_t> at_name_;  // generations at name_ at some moment of the round
};

}  // namespace swthrottle::input
