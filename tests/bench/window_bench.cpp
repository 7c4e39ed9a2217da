// Micro benchmarks of the window core (docs/PERFORMANCE.md, Window core). Every window
// benchmark runs for {accurate, efficient} x {one hot key, 10^4 keys}, with 1
// and 2 threads (SWTHROTTLE_BENCH_MAX_THREADS raises the maximum on a machine
// with more cores), next to two baselines: one shared std::atomic and one
// std::mutex. tests/bench/run_window_bench.sh prints the results as a table.
//
// Items are decisions (or adds); with several threads the figures are
// aggregate: wall time divided by the operations of all threads.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "window/core.h"

namespace {

using swthrottle::window::AlertPolicy;
using swthrottle::window::AtLeast;
using swthrottle::window::Mode;
using swthrottle::window::Window;
using swthrottle::window::WindowSpec;

// 10 s in 10 buckets of one event type: a typical "Y per 10s" rule.
constexpr WindowSpec kSpec{1000, 10, 1};
constexpr int64_t kStartMs = 1'700'000'000'000;  // an ordinary epoch time (2023)
// Time advances one ms every 64 operations of a thread, so a bucket turns
// over every 64 000 operations: the reset-on-reuse path is part of the cost.
constexpr int kOpsPerMsShift = 6;
constexpr uint64_t kHugeLimit = UINT64_MAX / 2;  // never reached: every line passes
constexpr uint64_t kFloodLimit = 100;
constexpr uint32_t kManyKeys = 10'000;
// The key picked by each operation, from a precomputed random sequence so the
// choice costs one load; a power of two so wrapping is a mask.
constexpr uint32_t kKeySeqLen = 1u << 16;

const AtLeast kNeverHolds(UINT64_MAX);

int64_t time_at(uint64_t i) { return kStartMs + static_cast<int64_t>(i >> kOpsPerMsShift); }

std::vector<uint32_t> g_key_seq;

void build_key_seq() {
  g_key_seq.resize(kKeySeqLen);
  uint64_t x = 0x9E3779B97F4A7C15u;  // fixed seed: every run walks the same keys
  for (uint32_t& k : g_key_seq) {
    // splitmix64: cheap, and good enough to defeat the prefetcher.
    x += 0x9E3779B97F4A7C15u;
    uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    z ^= z >> 31;
    k = static_cast<uint32_t>(z % kManyKeys);
  }
}

// The windows of one run. Built by a Setup callback, which Google Benchmark
// calls before it starts the run's threads, so every thread may read it
// before its timed loop; fresh for every run, so each run starts from empty
// windows at kStartMs whatever the previous run left behind.
struct Fixture {
  explicit Fixture(std::size_t keys) : passes(keys) {}

  std::vector<std::unique_ptr<Window>> owned;
  std::vector<Window*> windows;
  // BM_DecideFlood: passes per window position (one position per key: the
  // flood is at a fixed time), merged from the threads after their loops.
  std::vector<std::atomic<uint64_t>> passes;
  uint64_t prefilled = 0;
  std::atomic<int> threads_started{0};
  std::atomic<int> threads_done{0};
};

std::unique_ptr<Fixture> g_fixture;

template <Mode M, uint32_t Keys, uint64_t Prefill>
void setup_windows(const benchmark::State&) {
  auto f = std::make_unique<Fixture>(Keys);
  f->owned.reserve(Keys);
  for (uint32_t k = 0; k < Keys; ++k) {
    f->owned.push_back(swthrottle::window::make_window(M, kSpec));
    if constexpr (Prefill > 0) f->owned.back()->add(kStartMs, 0, Prefill);
    f->windows.push_back(f->owned.back().get());
  }
  f->prefilled = Prefill;
  g_fixture = std::move(f);
}

void teardown_windows(const benchmark::State&) { g_fixture.reset(); }

// Runs op(window, key index, i) once per iteration, i counting this thread's
// iterations. The hot-key loop has no key lookup at all.
template <typename Op>
void run_ops(benchmark::State& state, Op op) {
  swthrottle::window::set_stripe_id(static_cast<uint32_t>(state.thread_index()));
  Window* const* windows = g_fixture->windows.data();
  uint64_t i = 0;
  if (g_fixture->windows.size() == 1) {
    Window& w = *windows[0];
    for (auto _ : state) op(w, 0u, i++);
  } else {
    const uint32_t* seq = g_key_seq.data();
    // Threads start at different points of the sequence, so they do not walk
    // the same keys in lockstep.
    uint64_t j = static_cast<uint64_t>(state.thread_index()) * 7919u;
    for (auto _ : state) {
      const uint32_t k = seq[j++ & (kKeySeqLen - 1)];
      op(*windows[k], k, i++);
    }
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_Add(benchmark::State& state) {
  run_ops(state, [](Window& w, uint32_t, uint64_t i) { benchmark::DoNotOptimize(w.add(time_at(i), 0)); });
}

// Sum + add: every line passes.
void BM_DecideBelowThreshold(benchmark::State& state) {
  run_ops(state, [](Window& w, uint32_t, uint64_t i) {
    const int64_t t = time_at(i);
    benchmark::DoNotOptimize(w.offer_throttle(t, t, kHugeLimit));
  });
}

// The windows start filled to kFloodLimit - 1 (untimed), so the timed loop is
// the flood itself: each position's last free pass (raced for by the threads),
// then suppressions, which in efficient mode take the saturation latch.
void decide_flood(benchmark::State& state, swthrottle::window::LineEvents events) {
  Fixture& f = *g_fixture;
  std::vector<uint64_t> passes(f.windows.size());  // allocated before the timed loop
  bool started = false;
  run_ops(state, [&](Window& w, uint32_t k, uint64_t) {
    if (!started) [[unlikely]] {
      // Google Benchmark's start barrier wakes the threads one after another,
      // microseconds apart: enough for the first thread to take the hot key's
      // only crossing alone. Line them up so that they race for it.
      f.threads_started.fetch_add(1);
      while (f.threads_started.load() < state.threads()) {
      }
      started = true;
    }
    if (w.offer_throttle(kStartMs, kStartMs, kFloodLimit, 0, events).passed) ++passes[k];
  });

  for (std::size_t k = 0; k < passes.size(); ++k) {
    if (passes[k] != 0) f.passes[k].fetch_add(passes[k]);
  }
  // The last thread to merge reports for all (the counter is summed over
  // threads, and the others leave it unset). Efficient mode may pass up to
  // T-1 extra lines per position; accurate mode, and one thread, none.
  if (f.threads_done.fetch_add(1) + 1 != state.threads()) return;
  uint64_t most = 0;
  for (const auto& p : f.passes) most = std::max(most, f.prefilled + p.load());
  state.counters["overshoot"] = most > kFloodLimit ? static_cast<double>(most - kFloodLimit) : 0.0;
}

void BM_DecideFlood(benchmark::State& state) { decide_flood(state, {}); }

// The flood of a throttle rule of two events, each suppressed line matching
// both: the summary's per-event counts cost two more adds per line (striped
// in efficient mode). Measured 2026-11-25 on the shared 2-core dev box (load
// ~5, so real time is noise and CPU times swing by 30%; CPU time, median of
// 5, threads:1, keys:1), BM_DecideFlood -> BM_DecideFloodTwoEvents:
// accurate ~7.7 -> 9.7 ns, efficient ~7.6 -> 10.3 ns per line. BM_DecideFlood
// itself against the commit before per-event counts: accurate 7.3 -> 7.7 ns,
// efficient 6.6-7.2 -> 7.6-7.7 ns.
void BM_DecideFloodTwoEvents(benchmark::State& state) { decide_flood(state, {0b11, 2}); }

// Add + evaluate a condition that never holds: no alert fires.
void BM_AlertAddAndDecide(benchmark::State& state) {
  const AlertPolicy policy{&kNeverHolds, 0, false};
  std::array<uint64_t, kSpec.events> counts{};
  run_ops(state, [&policy, &counts](Window& w, uint32_t, uint64_t i) {
    const int64_t t = time_at(i);
    benchmark::DoNotOptimize(w.offer_alert(t, t, /*events=*/1, policy, counts));
  });
}

struct alignas(swthrottle::window::kFalseSharingRange) SharedCounter {
  std::atomic<uint64_t> value{0};
};
SharedCounter g_atomic;

void BM_AtomicFetchAdd(benchmark::State& state) {
  for (auto _ : state) g_atomic.value.fetch_add(1);  // seq_cst, like the window cells
  state.SetItemsProcessed(state.iterations());
}

std::mutex g_mutex;
uint64_t g_guarded = 0;

void BM_MutexIncrement(benchmark::State& state) {
  for (auto _ : state) {
    std::lock_guard lock(g_mutex);
    ++g_guarded;
  }
  state.SetItemsProcessed(state.iterations());
}

int max_threads() {
  const char* env = std::getenv("SWTHROTTLE_BENCH_MAX_THREADS");
  const int n = env != nullptr ? std::atoi(env) : 0;
  return n >= 1 ? n : 2;
}

benchmark::internal::Benchmark* configure(benchmark::internal::Benchmark* b) {
  return b->MinTime(0.2)->ThreadRange(1, max_threads())->UseRealTime();
}

using SetupFn = void (*)(const benchmark::State&);

struct Variant {
  const char* name;  // mode/keys:N, parsed by run_window_bench.sh
  SetupFn empty;
  SetupFn flood;  // filled to kFloodLimit - 1
};

const Variant kVariants[] = {
    {"accurate/keys:1", &setup_windows<Mode::Accurate, 1, 0>, &setup_windows<Mode::Accurate, 1, kFloodLimit - 1>},
    {"efficient/keys:1", &setup_windows<Mode::Efficient, 1, 0>, &setup_windows<Mode::Efficient, 1, kFloodLimit - 1>},
    {"accurate/keys:10000", &setup_windows<Mode::Accurate, kManyKeys, 0>,
     &setup_windows<Mode::Accurate, kManyKeys, kFloodLimit - 1>},
    {"efficient/keys:10000", &setup_windows<Mode::Efficient, kManyKeys, 0>,
     &setup_windows<Mode::Efficient, kManyKeys, kFloodLimit - 1>},
};

void register_window_bench(const char* name, void (*fn)(benchmark::State&), bool flood) {
  for (const Variant& v : kVariants) {
    const std::string full = std::string(name) + "/" + v.name;
    configure(benchmark::RegisterBenchmark(full.c_str(), fn))
        ->Setup(flood ? v.flood : v.empty)
        ->Teardown(&teardown_windows);
  }
}

}  // namespace

int main(int argc, char** argv) {
  // glibc locks and atomics take a cheaper path until a process creates its
  // first thread, which would make whichever single-thread run comes first
  // look faster than the rest. swthrottle has threads, so start them here.
  std::thread([] {}).join();

  build_key_seq();
  configure(benchmark::RegisterBenchmark("BM_AtomicFetchAdd", &BM_AtomicFetchAdd));
  configure(benchmark::RegisterBenchmark("BM_MutexIncrement", &BM_MutexIncrement));
  register_window_bench("BM_Add", &BM_Add, false);
  register_window_bench("BM_DecideBelowThreshold", &BM_DecideBelowThreshold, false);
  register_window_bench("BM_DecideFlood", &BM_DecideFlood, true);
  register_window_bench("BM_DecideFloodTwoEvents", &BM_DecideFloodTwoEvents, true);
  register_window_bench("BM_AlertAddAndDecide", &BM_AlertAddAndDecide, false);

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
