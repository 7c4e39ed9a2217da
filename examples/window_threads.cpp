// Using swthrottle's window core from another C++ program: four threads count
// HTTP requests and errors in one shared one-minute window, and a throttle lets
// at most 5 "disk full" messages through per minute.
//
//   cmake --build build --target window_threads_example && ./build/window_threads_example
#include <cstdio>
#include <thread>
#include <vector>

#include "window/core.h"

namespace sw = swthrottle::window;

enum class Http { Request, Error, count };

int main() {
  sw::TypedWindow<Http, sw::EfficientWindow> traffic(60'000, 10);  // 1 min, 10 buckets of 6 s
  sw::TypedWindow<Http, sw::AccurateWindow> disk_full(60'000, 6);
  std::vector<std::thread> workers;
  std::atomic<int> passed{0};
  for (int id = 0; id < 4; ++id) {
    workers.emplace_back([&, id] {
      for (int i = 0; i < 1000; ++i) {
        const int64_t t_ms = 1'700'000'000'000 + i * 10;  // the caller owns the clock
        traffic.add(t_ms, Http::Request);
        if ((i + id) % 20 == 0) traffic.add(t_ms, Http::Error);
        if (i % 100 == 0 && disk_full.offer_throttle(t_ms, 5, Http::Error).passed) ++passed;
      }
    });
  }
  for (auto& w : workers) w.join();
  const auto c = traffic.counts();
  std::printf("requests=%llu errors=%llu error-rate=%.3f\n", static_cast<unsigned long long>(c[Http::Request]),
              static_cast<unsigned long long>(c[Http::Error]),
              static_cast<double>(c[Http::Error]) / static_cast<double>(c[Http::Request]));
  std::printf("disk-full messages passed: %d of 40 (at most 5 per minute)\n", passed.load());
  // Requests 4 x 1000, errors 4 x 50, all inside the last minute: exact once threads are done.
  return c[Http::Request] == 4000 && c[Http::Error] == 200 && passed.load() == 5 ? 0 : 1;
}
