// UnconfirmedWrites: how many of the counts this host wrote to one primary
// no replica had acknowledged yet (DESIGN.md §8.10): an upper bound on what
// a failover to one of its replicas loses, since Redis replicates
// asynchronously ("you will receive your acknowledged response first, and
// only then will the command be replicated").
//
// The fleet thread tells it every count Redis answered (wrote()), and, about
// once a second, the primary's ROLE (looked()): the primary's replication
// offset then covers every write answered before it on the same connection,
// and once the best replica has acknowledged that offset, those writes are
// confirmed. The bound is therefore the counts of the last second or two
// (replicas acknowledge once a second), never fewer than were lost.
//
// Pure: no I/O, no clock. Not thread-safe (the fleet thread's own).
#pragma once

#include <cstdint>
#include <deque>
#include <utility>

namespace swthrottle::fleet {

class UnconfirmedWrites {
 public:
  // Counts Redis answered as written (passes, events, permits, claims).
  void wrote(uint64_t counts) { written_ += counts; }
  // A look at the primary's ROLE: its replication offset now, and the
  // largest offset a replica acknowledged (-1: no replica).
  void looked(int64_t primary_offset, int64_t replica_offset);
  // Written and not known to be on a replica.
  uint64_t unconfirmed() const { return written_ - confirmed_; }
  uint64_t written() const { return written_; }

 private:
  // Kept at most: older looks are dropped, which only makes unconfirmed()
  // larger (still a bound).
  static constexpr std::size_t kMaxMarks = 64;
  uint64_t written_ = 0;
  uint64_t confirmed_ = 0;
  std::deque<std::pair<int64_t, uint64_t>> marks_;  // (primary offset, written then), oldest first
};

}  // namespace swthrottle::fleet
