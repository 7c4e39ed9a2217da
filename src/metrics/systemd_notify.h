// SystemdNotify: the sd_notify(3) protocol (libsystemd) for Type=notify
// units (man page: SYSTEMD). Without NOTIFY_SOCKET every call does nothing.
//
//   READY=1       once the rules are loaded and the inputs are open
//   STATUS=...    a one-line summary, now and then
//   WATCHDOG=1    from the deciders' progress (see watchdog_due): a stalled
//                 pipeline stops the pings and WatchdogSec restarts it
//   RELOADING=1   at SIGHUP (with MONOTONIC_USEC), READY=1 after it
//   STOPPING=1    at SIGINT/SIGTERM or the end of input
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace swthrottle::metrics {

class SystemdNotify {
 public:
  SystemdNotify();  // reads NOTIFY_SOCKET and WATCHDOG_USEC (sd_watchdog_enabled) once

  bool enabled() const { return enabled_; }
  // The watchdog interval systemd asked for (0: none); pings go at half of it.
  std::chrono::microseconds watchdog() const { return watchdog_; }

  void ready();
  void status(const std::string& line);
  void watchdog_ping();
  void reloading();
  void stopping();

 private:
  bool send(const std::string& message);
  bool enabled_ = false;
  std::chrono::microseconds watchdog_{0};
};

// Should a watchdog ping go now? Only when the pipeline made progress since
// the last ping, or had nothing to do: `last_progress_ms` (a decider took a
// line or found its inputs idle) no older than the watchdog interval.
bool watchdog_due(int64_t now_ms, int64_t last_progress_ms, int64_t last_ping_ms, int64_t interval_ms);

}  // namespace swthrottle::metrics
