// SlotMap: which primary serves each of a Redis Cluster's 16384 slots, as
// CLUSTER SLOTS last said and MOVED answers have corrected since; and the
// MOVED / ASK redirects themselves. Pure: the cluster's fleet server
// (cluster_server.h) reads the map from the cluster and keeps it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "fleet/endpoint.h"
#include "fleet/key_slot.h"

namespace swthrottle::fleet {

class SlotMap {
 public:
  SlotMap() { owner_.fill(kNone); }

  // Slots first..last (inclusive) are served by `primary`.
  void assign(uint16_t first, uint16_t last, const Address& primary);
  // The index into primaries() of the slot's primary; -1: none known.
  int primary_of(uint16_t slot) const { return owner_[slot] == kNone ? -1 : owner_[slot]; }
  // The primaries, each once (in the order they were first named).
  const std::vector<Address>& primaries() const { return primaries_; }
  // Slots no primary serves (a cluster that is down, or a map half read).
  std::size_t uncovered() const;
  // Whether `a` serves any slot.
  bool serves(const Address& a) const;

 private:
  static constexpr uint16_t kNone = UINT16_MAX;
  int index_of(const Address& a);  // adds it when new
  std::array<uint16_t, kClusterSlots> owner_;
  std::vector<Address> primaries_;
};

// A cluster's redirect, from an error answer.
struct Redirect {
  bool ask = false;  // ASK: this one request, after ASKING; MOVED: the slot has moved for good
  uint16_t slot = 0;
  Address to;
};

// "MOVED 3999 127.0.0.1:6381" or "ASK 3999 127.0.0.1:6381" (an empty host,
// ":6381", is the host of `from`, the server that answered). Empty when
// `error` is neither.
std::optional<Redirect> parse_redirect(std::string_view error, const Address& from);

}  // namespace swthrottle::fleet
