// UnconfirmedWrites (DESIGN.md §8.10): counts written to a primary are
// confirmed once a replica has acknowledged the replication offset the
// primary had when they were answered; the rest bound what a failover loses.
#include <doctest/doctest.h>

#include "fleet/primary_node.h"
#include "fleet/unconfirmed_writes.h"

using swthrottle::fleet::counts_written;
using swthrottle::fleet::Op;
using swthrottle::fleet::Reply;
using swthrottle::fleet::Request;
using swthrottle::fleet::UnconfirmedWrites;

TEST_CASE("fleet unconfirmed writes: confirmed by the replica's offset, a look at a time") {
  UnconfirmedWrites u;
  CHECK(u.unconfirmed() == 0);
  u.wrote(5);
  CHECK(u.unconfirmed() == 5);
  u.looked(100, 40);  // the 5 were answered by offset 100; the replica is at 40
  CHECK(u.unconfirmed() == 5);
  u.wrote(3);
  u.looked(130, 100);  // offset 100 reached: the first 5 confirmed
  CHECK(u.unconfirmed() == 3);
  u.wrote(2);
  u.looked(150, 150);  // caught up: all of them
  CHECK(u.unconfirmed() == 0);
  CHECK(u.written() == 10);
  u.wrote(4);
  u.looked(160, -1);  // no replica left: nothing more is confirmed
  u.looked(170, -1);
  CHECK(u.unconfirmed() == 4);
}

TEST_CASE("fleet unconfirmed writes: old looks are forgotten, which only makes the bound larger") {
  UnconfirmedWrites u;
  for (int i = 1; i <= 200; ++i) {
    u.wrote(1);
    u.looked(i * 10, 0);  // a replica that never catches up
  }
  CHECK(u.unconfirmed() == 200);
  u.looked(2001, 2000);  // everything confirmed at once
  CHECK(u.unconfirmed() == 0);
}

TEST_CASE("fleet unconfirmed writes: what each answer wrote") {
  Request r;
  Reply a;
  a.ok = true;
  r.op = Op::Throttle;
  a.passed = true;
  CHECK(counts_written(r, a) == 1);
  a.passed = false;
  CHECK(counts_written(r, a) == 0);
  r.op = Op::Alert;
  r.events = 0b1011;
  a.claimed = true;
  CHECK(counts_written(r, a) == 4);  // three events and a claim
  a.late = true;
  CHECK(counts_written(r, a) == 1);
  a = Reply{};
  a.ok = true;
  r.op = Op::Flush;
  r.deltas = {{10, 0, 5}, {11, 1, 2}};
  a.late_count = 2;
  CHECK(counts_written(r, a) == 5);
  a.duplicate = true;
  CHECK(counts_written(r, a) == 0);
  a = Reply{};
  a.ok = true;
  r.op = Op::Lease;
  a.granted = 12;
  CHECK(counts_written(r, a) == 12);
  r.op = Op::Read;
  CHECK(counts_written(r, a) == 0);
  a.ok = false;  // refused: nothing written
  r.op = Op::Lease;
  CHECK(counts_written(r, a) == 0);
}
