#include "fleet/slot_map.h"

#include <algorithm>
#include <charconv>
#include <string>

namespace swthrottle::fleet {

void SlotMap::assign(uint16_t first, uint16_t last, const Address& primary) {
  const auto i = static_cast<uint16_t>(index_of(primary));
  for (uint32_t s = first; s <= last && s < kClusterSlots; ++s) owner_[s] = i;
}

int SlotMap::index_of(const Address& a) {
  const auto found = std::find(primaries_.begin(), primaries_.end(), a);
  if (found != primaries_.end()) return static_cast<int>(found - primaries_.begin());
  primaries_.push_back(a);
  return static_cast<int>(primaries_.size() - 1);
}

std::size_t SlotMap::uncovered() const {
  return static_cast<std::size_t>(std::count(owner_.begin(), owner_.end(), kNone));
}

bool SlotMap::serves(const Address& a) const {
  const auto found = std::find(primaries_.begin(), primaries_.end(), a);
  if (found == primaries_.end()) return false;
  const auto i = static_cast<uint16_t>(found - primaries_.begin());
  return std::find(owner_.begin(), owner_.end(), i) != owner_.end();
}

std::optional<Redirect> parse_redirect(std::string_view error, const Address& from) {
  Redirect r;
  if (error.starts_with("MOVED ")) {
    error.remove_prefix(6);
  } else if (error.starts_with("ASK ")) {
    error.remove_prefix(4);
    r.ask = true;
  } else {
    return std::nullopt;
  }
  const auto space = error.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  unsigned slot = 0;
  const std::string_view slot_text = error.substr(0, space);
  const auto [end, ec] = std::from_chars(slot_text.data(), slot_text.data() + slot_text.size(), slot);
  if (ec != std::errc() || end != slot_text.data() + slot_text.size() || slot >= kClusterSlots) return std::nullopt;
  r.slot = static_cast<uint16_t>(slot);
  // host:port, the host possibly an IPv6 address (its last ':' ends it).
  const std::string_view where = error.substr(space + 1);
  const auto colon = where.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  unsigned port = 0;
  const std::string_view port_text = where.substr(colon + 1);
  const auto [pend, pec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (pec != std::errc() || pend != port_text.data() + port_text.size() || port == 0 || port > 65535)
    return std::nullopt;
  r.to.port = static_cast<uint16_t>(port);
  r.to.host = colon == 0 ? from.host : std::string(where.substr(0, colon));
  return r;
}

}  // namespace swthrottle::fleet
