#include "window/distinct_count.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace swthrottle::window {

// Estimating: a sketch per ring slot (the bucket it is of in `tags`), and
// the merge of those inside the window with its histogram.
struct DistinctCount::Sketches {
  explicit Sketches(uint32_t buckets) : tags(buckets, kNoBucket), registers(buckets * hll::kRegisters, 0) {
    histogram[0] = hll::kRegisters;  // every merged register empty
  }
  std::vector<int64_t> tags;
  std::vector<uint8_t> registers;  // slot-major, hll::kRegisters each
  std::array<uint8_t, hll::kRegisters> merged{};
  hll::Histogram histogram{};

  uint8_t* slot(uint32_t s) { return registers.data() + std::size_t(s) * hll::kRegisters; }
};

DistinctCount::DistinctCount(const WindowSpec& spec) : spec_(spec) { spec_.previous = 0; }

DistinctCount::~DistinctCount() = default;

namespace {

bool by_hash(const DistinctState::Seen& a, uint64_t h) { return a.hash < h; }

}  // namespace

void DistinctCount::advance(int64_t now_ms) {
  const int64_t b = bucket_of(now_ms, spec_);
  if (now_b_ != kNoBucket && b <= now_b_) return;
  now_b_ = b;
  const int64_t oldest = oldest_in_window(now_b_, spec_);
  std::erase_if(exact_, [&](const DistinctState::Seen& s) { return s.bucket < oldest; });
  if (!sketches_) return;
  if (oldest > overflow_b_) {  // every value of the window was seen since the last overflow: exact again
    sketches_.reset();
    overflow_b_ = kNoBucket;
    return;
  }
  merge_window();
}

bool DistinctCount::add(int64_t t_ms, uint64_t hash) {
  advance(t_ms);
  const int64_t b = bucket_of(t_ms, spec_);
  if (b < oldest_in_window(now_b_, spec_)) return false;
  if (sketches_) add_to_sketch(b, hash);
  add_exact(b, hash);
  return true;
}

void DistinctCount::add_exact(int64_t b, uint64_t hash) {
  auto it = std::lower_bound(exact_.begin(), exact_.end(), hash, by_hash);
  if (it != exact_.end() && it->hash == hash) {
    it->bucket = std::max(it->bucket, b);
    return;
  }
  if (exact_.size() < kExactValues) {
    exact_.insert(it, DistinctState::Seen{hash, b});
    return;
  }
  // One value too many: estimate from here on; the values seen from now on
  // are kept exactly again, this one first.
  if (!sketches_) {
    start_estimating();
    add_to_sketch(b, hash);
  }
  overflow_b_ = now_b_;
  exact_.clear();
  exact_.push_back(DistinctState::Seen{hash, b});
}

void DistinctCount::start_estimating() {
  sketches_ = std::make_unique<Sketches>(spec_.buckets);
  for (const DistinctState::Seen& s : exact_) add_to_sketch(s.bucket, s.hash);
}

void DistinctCount::add_to_sketch(int64_t b, uint64_t hash) {
  Sketches& k = *sketches_;
  const uint32_t s = slot_of(b, spec_);
  if (k.tags[s] != b) {
    if (k.tags[s] > b) return;  // the slot holds a newer bucket: b has left the window (not reached: add() checks)
    std::memset(k.slot(s), 0, hll::kRegisters);
    k.tags[s] = b;
  }
  const hll::Position p = hll::position_of(hash);
  uint8_t& r = k.slot(s)[p.index];
  if (r < p.rank) r = p.rank;
  uint8_t& m = k.merged[p.index];
  if (m < p.rank) {  // b is inside the window: the merge takes it at once
    --k.histogram[m];
    ++k.histogram[p.rank];
    m = p.rank;
  }
}

// The registers of the window's buckets, merged: O(B x 4096) bytes, once
// each time now enters a new bucket.
void DistinctCount::merge_window() {
  Sketches& k = *sketches_;
  k.merged.fill(0);
  const int64_t oldest = oldest_in_window(now_b_, spec_);
  for (uint32_t s = 0; s < spec_.buckets; ++s) {
    if (k.tags[s] < oldest || k.tags[s] > now_b_) continue;
    const uint8_t* r = k.slot(s);
    for (std::size_t i = 0; i < hll::kRegisters; ++i) k.merged[i] = std::max(k.merged[i], r[i]);
  }
  k.histogram = hll::histogram_of(k.merged);
}

DistinctCount::Count DistinctCount::count() const {
  if (!sketches_) return Count{exact_.size(), false};
  return Count{static_cast<uint64_t>(std::llround(hll::estimate(sketches_->histogram))), true};
}

DistinctState DistinctCount::save() const {
  DistinctState st;
  st.exact = exact_;
  if (!sketches_) return st;
  st.overflow_bucket = overflow_b_;
  const int64_t oldest = oldest_in_window(now_b_, spec_);
  for (int64_t b = std::max<int64_t>(0, oldest); b <= now_b_; ++b) {
    const uint32_t s = slot_of(b, spec_);
    if (sketches_->tags[s] != b) continue;
    const uint8_t* r = sketches_->slot(s);
    st.sketches.push_back({b, std::vector<uint8_t>(r, r + hll::kRegisters)});
  }
  return st;
}

void DistinctCount::load(const DistinctState& st) {
  if (now_b_ == kNoBucket) return;  // nothing was ever seen: nothing to keep
  const int64_t oldest = oldest_in_window(now_b_, spec_);
  exact_.clear();
  for (const DistinctState::Seen& s : st.exact)
    if (s.bucket >= oldest && s.bucket <= now_b_) exact_.push_back(s);
  std::sort(exact_.begin(), exact_.end(), [](const auto& a, const auto& b) { return a.hash < b.hash; });
  exact_.erase(std::unique(exact_.begin(), exact_.end(), [](const auto& a, const auto& b) { return a.hash == b.hash; }),
               exact_.end());
  if (exact_.size() > kExactValues) exact_.resize(kExactValues);
  sketches_.reset();
  overflow_b_ = kNoBucket;
  if (st.overflow_bucket < oldest) return;  // exact (or the sketches are all outside the window)
  sketches_ = std::make_unique<Sketches>(spec_.buckets);
  overflow_b_ = std::min(st.overflow_bucket, now_b_);
  for (const DistinctState::Sketch& k : st.sketches) {
    if (k.bucket < oldest || k.bucket > now_b_ || k.registers.size() != hll::kRegisters) continue;
    const uint32_t s = slot_of(k.bucket, spec_);
    sketches_->tags[s] = k.bucket;
    uint8_t* r = sketches_->slot(s);
    for (std::size_t i = 0; i < hll::kRegisters; ++i)
      r[i] = std::min<uint8_t>(k.registers[i], static_cast<uint8_t>(hll::kMaxRank));
  }
  merge_window();
}

}  // namespace swthrottle::window
