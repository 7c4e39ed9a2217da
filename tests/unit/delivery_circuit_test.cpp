#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "delivery/circuit.h"

using swthrottle::delivery::Circuit;
using State = Circuit::State;

namespace {

const char* name(State s) {
  switch (s) {
    case State::Closed: return "Closed";
    case State::Open: return "Open";
    case State::HalfOpen: return "HalfOpen";
  }
  return "?";
}

// Fails attempts at `now` until the circuit opens; returns how many it took.
int fail_until_open(Circuit& c, int64_t now) {
  int n = 0;
  while (c.state() == State::Closed && n < 1'000) {
    REQUIRE(c.allow(now));
    c.failure(now);
    ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("delivery circuit: closed lets every attempt go, opens after N failures in a row") {
  Circuit c(3, 10'000, 60'000);
  CHECK(std::string(name(c.state())) == "Closed");
  CHECK(c.allow(0));
  c.failure(0);
  CHECK(c.allow(1));
  c.failure(1);
  CHECK(std::string(name(c.state())) == "Closed");
  CHECK(c.allow(2));
  c.failure(2);  // the third in a row
  CHECK(std::string(name(c.state())) == "Open");
  CHECK(c.reopens_at() == 10'002);
  CHECK_FALSE(c.allow(3));
}

TEST_CASE("delivery circuit: a success between failures starts the count again") {
  Circuit c(3, 10'000, 60'000);
  for (int round = 0; round < 5; ++round) {
    c.failure(round);
    c.failure(round);
    c.success();
    CHECK(std::string(name(c.state())) == "Closed");
  }
  c.failure(100);
  c.failure(100);
  CHECK(std::string(name(c.state())) == "Closed");
  c.failure(100);
  CHECK(std::string(name(c.state())) == "Open");
}

TEST_CASE("delivery circuit: open refuses until open_ms, then exactly one trial") {
  Circuit c(2, 10'000, 60'000);
  CHECK(fail_until_open(c, 1'000) == 2);
  CHECK(c.reopens_at() == 11'000);
  CHECK_FALSE(c.allow(1'000));
  CHECK_FALSE(c.allow(10'999));
  CHECK(std::string(name(c.state())) == "Open");
  CHECK(c.allow(11'000));  // the trial
  CHECK(std::string(name(c.state())) == "HalfOpen");
  // Until the trial's verdict, nothing else goes, however long it takes.
  CHECK_FALSE(c.allow(11'000));
  CHECK_FALSE(c.allow(11'001));
  CHECK_FALSE(c.allow(500'000));
}

TEST_CASE("delivery circuit: the trial's success closes the circuit") {
  Circuit c(2, 10'000, 60'000);
  fail_until_open(c, 0);
  REQUIRE(c.allow(10'000));
  c.success();
  CHECK(std::string(name(c.state())) == "Closed");
  CHECK(c.allow(10'001));
  CHECK(c.allow(10'002));
  // Closed again for good: it takes N failures in a row to open, and it
  // opens for open_ms again, not for the doubled time.
  c.failure(20'000);
  CHECK(std::string(name(c.state())) == "Closed");
  c.failure(20'000);
  CHECK(std::string(name(c.state())) == "Open");
  CHECK(c.reopens_at() == 30'000);
}

TEST_CASE("delivery circuit: a failed trial reopens for twice as long, up to max_open_ms") {
  Circuit c(1, 10'000, 60'000);
  int64_t now = 0;
  fail_until_open(c, now);
  CHECK(c.reopens_at() == 10'000);
  const int64_t expected_waits[] = {20'000, 40'000, 60'000, 60'000, 60'000};
  for (const int64_t wait : expected_waits) {
    CAPTURE(wait);
    now = c.reopens_at();
    CHECK_FALSE(c.allow(now - 1));
    REQUIRE(c.allow(now));
    CHECK(std::string(name(c.state())) == "HalfOpen");
    c.failure(now + 5);  // the trial failed 5 ms later: the wait counts from then
    CHECK(std::string(name(c.state())) == "Open");
    CHECK(c.reopens_at() == now + 5 + wait);
  }
  // A success after all that closes it and forgets the doubling.
  REQUIRE(c.allow(c.reopens_at()));
  c.success();
  fail_until_open(c, 1'000'000);
  CHECK(c.reopens_at() == 1'010'000);
}

TEST_CASE("delivery circuit: a late failure while open does not push the reopening back") {
  Circuit c(1, 10'000, 60'000);
  fail_until_open(c, 0);
  c.failure(5'000);
  CHECK(c.reopens_at() == 10'000);
  CHECK(c.allow(10'000));
}
