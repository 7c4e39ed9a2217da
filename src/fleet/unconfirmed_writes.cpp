#include "fleet/unconfirmed_writes.h"

namespace swthrottle::fleet {

void UnconfirmedWrites::looked(int64_t primary_offset, int64_t replica_offset) {
  marks_.emplace_back(primary_offset, written_);
  while (!marks_.empty() && marks_.front().first <= replica_offset) {
    confirmed_ = marks_.front().second;
    marks_.pop_front();
  }
  if (marks_.size() > kMaxMarks) marks_.pop_front();
}

}  // namespace swthrottle::fleet
