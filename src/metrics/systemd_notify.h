// SystemdNotify: the sd_notify(3) protocol (libsystemd) for Type=notify
// units (man page: SYSTEMD). Without NOTIFY_SOCKET, or in a build without
// libsystemd (CMake SWTHROTTLE_SYSTEMD), every call does nothing.
//
//   READY=1       once the rules are loaded and the inputs are open
//   STATUS=...    a one-line summary, now and then
//   WATCHDOG=1    at half the WatchdogSec interval, while the pipeline is
//                 healthy (metrics/health.h: no input with lines waiting and
//                 none decided for the interval): a stalled pipeline stops
//                 the pings and WatchdogSec restarts it; an idle one is fine
//   RELOADING=1   at SIGHUP (with MONOTONIC_USEC), READY=1 after it
//   STOPPING=1    at SIGINT/SIGTERM or the end of input
//
// The calls may come from any thread: sd_notify(3) opens a socket of its own
// for each message, and the object does not change after construction.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "util/clock.h"

namespace swthrottle::metrics {

class SystemdNotify {
 public:
  // Reads NOTIFY_SOCKET and WATCHDOG_USEC (sd_watchdog_enabled) once;
  // `clock` gives RELOADING=1 its MONOTONIC_USEC (its steady time).
  explicit SystemdNotify(const Clock& clock = system_clock());

  // NOTIFY_SOCKET is set and not empty (a path, or "@name": an abstract socket).
  bool enabled() const { return enabled_; }
  // The watchdog interval systemd asked for (0: none); pings go at half of it.
  std::chrono::microseconds watchdog() const { return watchdog_; }

  // The messages, each one datagram, as sd_notify(3) sends them. Failures are
  // not reported: the service manager is not there to hear about them.
  void ready();
  // Newlines (and CR, NUL) become spaces: STATUS= is one line.
  void status(const std::string& line);
  void watchdog_ping();
  // RELOADING=1 with MONOTONIC_USEC=<the clock's steady time in us: CLOCK_MONOTONIC> (systemd >= 253
  // wants it; older ones ignore it). Send ready() when the reload is done.
  void reloading();
  void stopping();

 private:
  bool send(const std::string& message);
  const Clock& clock_;
  bool enabled_ = false;
  std::chrono::microseconds watchdog_{0};
};

}  // namespace swthrottle::metrics
