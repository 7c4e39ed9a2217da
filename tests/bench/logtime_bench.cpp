// Micro benchmarks of LogTime::parse (time = "log", DESIGN.md §4): one iteration
// parses one line, so the time per iteration is the cost per line.
//
// The single-form benchmarks cycle through lines of that form whose stamps
// differ the way consecutive lines of a real log do (the milliseconds, now
// and then the second), so that LogTime's memo of the last stamp's date and
// time is measured as it pays in a log, not on one line parsed forever.
//
// BM_LogTimeFile parses the first 2048 lines (SWTHROTTLE_BENCH_LOG_LINES=N for
// N) of the file named by SWTHROTTLE_BENCH_LOG in order, e.g. a log of
// tests/bench/gen_log.py, and is skipped without it:
//   python3 tests/bench/gen_log.py --out /tmp/bench.log --lines 200000 --seed 1
//   SWTHROTTLE_BENCH_LOG=/tmp/bench.log swthrottle_bench --benchmark_filter=LogTime
//
// This file has no main(): window_bench.cpp provides it for the whole target.
// LogTime lives in swthrottle_core, which the target must link; until it does
// (SWTHROTTLE_VERSION, a public definition of swthrottle_core, tells), this
// file compiles to nothing rather than break the link.
#if defined(SWTHROTTLE_VERSION)

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/rules.h"
#include "match/logtime.h"

namespace {

using swthrottle::config::TimestampSpec;
using swthrottle::config::TimezoneSpec;
using swthrottle::match::LogTime;

constexpr int64_t kWallMs = 1795262400000;  // 2026-11-21 12:00:00Z, a little after the stamps below
// BM_LogTimeFile parses the first lines of the file only: in swthrottle the
// matcher has just read a line when its stamp is parsed, so it is in cache;
// a few hundred KB of lines stay in L2, as the whole file would not.
constexpr std::size_t kFileLines = 2048;

// The benchmark log's settings (tests/bench/gen_rules.py): auto, UTC, the year inferred.
LogTime make_logtime() {
  TimestampSpec spec;
  spec.form = TimestampSpec::Form::Auto;
  TimezoneSpec tz;
  tz.local = false;
  tz.offset_minutes = 0;
  tz.text = "UTC";
  auto lt = LogTime::make(spec, tz, 0);
  if (!lt) std::abort();
  return std::move(*lt);
}

void run_lines(benchmark::State& state, const std::vector<std::string>& lines) {
  const LogTime lt = make_logtime();
  std::vector<std::string_view> views(lines.begin(), lines.end());
  std::size_t i = 0;
  int64_t found = 0;
  for (auto _ : state) {
    auto t = lt.parse(views[i], kWallMs);
    benchmark::DoNotOptimize(t);
    found += t.has_value();
    if (++i == views.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["with_stamp"] =
      benchmark::Counter(static_cast<double>(found) / static_cast<double>(state.iterations()));
}

// Consecutive lines of one second: the milliseconds change on every line.
std::vector<std::string> iso_lines() {
  std::vector<std::string> out;
  for (int s = 0; s < 2; ++s) {
    for (int ms = 1; ms <= 500; ms += 7) {
      char stamp[32];
      std::snprintf(stamp, sizeof stamp, "2026-11-21T10:00:%02d.%03dZ", s, ms);
      out.push_back(std::string(stamp) +
                    " INFO  [main] c.e.payment.PaymentGateway: payment 47042 authorized in 3651 ms");
    }
  }
  return out;
}

void BM_LogTimeIso(benchmark::State& state) { run_lines(state, iso_lines()); }

void BM_LogTimeStackTrace(benchmark::State& state) {
  run_lines(state, {
                       "\tat com.example.orders.OrderService.place(OrderService.java:682)",
                       "\tat java.base/java.util.concurrent.ThreadPoolExecutor.runWorker(ThreadPoolExecutor.java:1136)",
                       "\tat org.springframework.web.servlet.FrameworkServlet.service(FrameworkServlet.java:511)",
                       "Caused by: java.lang.OutOfMemoryError: GC overhead limit exceeded",
                       "\t... 20 more",
                   });
}

// Lines of the other forms, as iso_lines(): consecutive, a few dozen a second.
std::vector<std::string> access_lines() {
  static const char* const kClients[] = {"74.83.30.32", "33.53.21.47", "138.62.13.153", "65.105.83.49"};
  static const char* const kRequests[] = {
      "\"GET /api/v1/search?q=item3 HTTP/1.1\" 304 46834 \"-\" \"curl/7.88.1\"",
      "\"GET /api/v1/orders/629272 HTTP/1.1\" 200 6689 \"-\" \"Mozilla/5.0 (Windows NT 10.0; Win64; x64)\"",
      "\"POST /api/v1/orders HTTP/1.1\" 201 512 \"-\" \"okhttp/4.12.0\""};
  std::vector<std::string> out;
  for (int s = 0; s < 2; ++s) {
    for (int k = 0; k < 48; ++k) {
      char stamp[40];
      std::snprintf(stamp, sizeof stamp, " - - [21/Nov/2026:10:00:%02d +0000] ", s);
      out.push_back(std::string(kClients[k % 4]) + stamp + kRequests[k % 3]);
    }
  }
  return out;
}

std::vector<std::string> syslog_lines() {
  static const char* const kRests[] = {
      " web-02 sshd[21339]: Received disconnect from 159.218.39.195 port 49772:11: Bye Bye [preauth]",
      " web-03 sshd[4411]: Failed password for invalid user admin from 10.1.2.3 port 50022 ssh2",
      " web-03 kernel: [3587.172111] audit: type=1400 audit(2260.5:733986): apparmor=\"ALLOWED\""};
  std::vector<std::string> out;
  for (int s = 0; s < 2; ++s) {
    for (int k = 0; k < 48; ++k) {
      char stamp[24];
      std::snprintf(stamp, sizeof stamp, "Nov 21 10:00:%02d", s);
      out.push_back(stamp + std::string(kRests[k % 3]));
    }
  }
  return out;
}

// nginx's error.log ("YYYY/MM/DD HH:MM:SS", the RFC 3339 memo's path) and
// zap-style JSON with an epoch "ts" (a JSON object's own search).
std::vector<std::string> slash_lines() {
  std::vector<std::string> out;
  for (int s = 0; s < 2; ++s) {
    for (int k = 0; k < 48; ++k) {
      char stamp[24];
      std::snprintf(stamp, sizeof stamp, "2026/11/21 10:00:%02d", s);
      out.push_back(stamp + std::string(" [error] 7#7: *") + std::to_string(k) +
                    " open() \"/usr/share/nginx/html/favicon.ico\" failed (2: No such file or directory)");
    }
  }
  return out;
}

std::vector<std::string> json_lines() {
  std::vector<std::string> out;
  for (int k = 0; k < 96; ++k) {
    out.push_back("{\"level\":\"info\",\"ts\":1795255200." + std::to_string(100 + k) +
                  ",\"caller\":\"server/handler.go:84\",\"msg\":\"request done\",\"status\":200}");
  }
  return out;
}

void BM_LogTimeAccess(benchmark::State& state) { run_lines(state, access_lines()); }

void BM_LogTimeSlash(benchmark::State& state) { run_lines(state, slash_lines()); }

void BM_LogTimeJson(benchmark::State& state) { run_lines(state, json_lines()); }

void BM_LogTimeSyslog(benchmark::State& state) { run_lines(state, syslog_lines()); }

void BM_LogTimeFile(benchmark::State& state) {
  const char* path = std::getenv("SWTHROTTLE_BENCH_LOG");
  if (path == nullptr || *path == '\0') {
    state.SkipWithError("set SWTHROTTLE_BENCH_LOG to a log file (tests/bench/gen_log.py writes one)");
    return;
  }
  std::size_t max_lines = kFileLines;
  if (const char* env = std::getenv("SWTHROTTLE_BENCH_LOG_LINES")) max_lines = std::strtoull(env, nullptr, 10);
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; lines.size() < max_lines && std::getline(in, line);) lines.push_back(std::move(line));
  if (lines.empty()) {
    state.SkipWithError("SWTHROTTLE_BENCH_LOG names no readable, non-empty file");
    return;
  }
  run_lines(state, lines);
}

BENCHMARK(BM_LogTimeIso);
BENCHMARK(BM_LogTimeStackTrace);
BENCHMARK(BM_LogTimeAccess);
BENCHMARK(BM_LogTimeSyslog);
BENCHMARK(BM_LogTimeSlash);
BENCHMARK(BM_LogTimeJson);
BENCHMARK(BM_LogTimeFile);

}  // namespace

#endif  // SWTHROTTLE_VERSION
