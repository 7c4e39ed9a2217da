// Bucket arithmetic at bucket edges (DESIGN.md §2), as exact tables.
#include <doctest/doctest.h>

#include "window/bucket.h"

using namespace swthrottle::window;

TEST_CASE("bucket: bucket_of and window range at the edges") {
  struct Row {
    int64_t width;
    uint32_t buckets;
    int64_t t;
    int64_t bucket;
    int64_t oldest;  // oldest bucket in the window when t is now
  };
  const Row rows[] = {
      // w = 1 s, 10 buckets: k*w-1, k*w, k*w+w-1
      {1000, 10, 0, 0, -9},
      {1000, 10, 999, 0, -9},
      {1000, 10, 1000, 1, -8},
      {1000, 10, 1999, 1, -8},
      {1000, 10, 59999, 59, 50},
      {1000, 10, 60000, 60, 51},
      // B = 1: the window is the current bucket only
      {60000, 1, 59999, 0, 0},
      {60000, 1, 60000, 1, 1},
      // w = 1 ms
      {1, 10, 0, 0, -9},
      {1, 10, 1, 1, -8},
      {1, 3600, 5000, 5000, 1401},
      // B = 3600 over an hour
      {1000, 3600, 3600000, 3600, 1},
      // negative times are clamped to 0
      {1000, 10, -5, 0, -9},
      // far times: 2^33 buckets of 1 ms
      {1, 10, int64_t{1} << 33, int64_t{1} << 33, (int64_t{1} << 33) - 9},
  };
  for (const Row& r : rows) {
    const WindowSpec s{r.width, r.buckets, 1};
    CAPTURE(r.width);
    CAPTURE(r.buckets);
    CAPTURE(r.t);
    CHECK(bucket_of(r.t, s) == r.bucket);
    CHECK(oldest_in_window(bucket_of(r.t, s), s) == r.oldest);
    CHECK(in_window(r.bucket, r.bucket, s));
    CHECK(in_window(r.oldest, r.bucket, s));
    CHECK_FALSE(in_window(r.oldest - 1, r.bucket, s));
    CHECK_FALSE(in_window(r.bucket + 1, r.bucket, s));
    CHECK(is_late(r.oldest - 1, r.bucket, s));
    CHECK_FALSE(is_late(r.oldest, r.bucket, s));
    CHECK_FALSE(is_late(r.bucket + 1, r.bucket, s));
  }
}

TEST_CASE("bucket: nothing is late before the first bucket") {
  const WindowSpec s{1000, 10, 1};
  CHECK_FALSE(is_late(0, kNoBucket, s));
  CHECK_FALSE(is_late(123456, kNoBucket, s));
}

TEST_CASE("bucket: ring slots") {
  const WindowSpec s{1000, 10, 1};
  CHECK(slot_of(0, s) == 0);
  CHECK(slot_of(9, s) == 9);
  CHECK(slot_of(10, s) == 0);
  CHECK(slot_of(int64_t{1} << 33, s) == static_cast<uint32_t>((int64_t{1} << 33) % 10));
  CHECK(WindowSpec{6000, 10, 1}.length_ms() == 60000);
}
