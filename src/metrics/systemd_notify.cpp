#include "metrics/systemd_notify.h"

#if SWTHROTTLE_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include <cstdlib>

namespace swthrottle::metrics {

SystemdNotify::SystemdNotify(const Clock& clock) : clock_(clock) {
#if SWTHROTTLE_HAVE_SYSTEMD
  const char* socket = std::getenv("NOTIFY_SOCKET");
  enabled_ = socket != nullptr && *socket != '\0';
  // 0: keep WATCHDOG_USEC and WATCHDOG_PID for whoever reads them next.
  // A negative result (a WATCHDOG_USEC or WATCHDOG_PID that does not parse)
  // is no watchdog, as 0 is.
  uint64_t usec = 0;
  if (::sd_watchdog_enabled(0, &usec) > 0) watchdog_ = std::chrono::microseconds(usec);
#endif
  // Built without libsystemd (CMake's SWTHROTTLE_SYSTEMD): never enabled.
}

void SystemdNotify::ready() { send("READY=1"); }

void SystemdNotify::status(const std::string& line) {
  // One assignment per line in the protocol: a newline would end STATUS=
  // and start a new (bogus) assignment.
  std::string one_line = line;
  for (char& c : one_line)
    if (c == '\n' || c == '\r' || c == '\0') c = ' ';
  send("STATUS=" + one_line);
}

void SystemdNotify::watchdog_ping() { send("WATCHDOG=1"); }

void SystemdNotify::reloading() {
  // MONOTONIC_USEC= lets systemd >= 253 tie this RELOADING=1 to the reload it
  // asked for; older systemd ignores the assignment.
  send("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(clock_.steady_ms() * 1000));
}

void SystemdNotify::stopping() { send("STOPPING=1"); }

bool SystemdNotify::send(const std::string& message) {
  if (!enabled_) return false;
#if SWTHROTTLE_HAVE_SYSTEMD
  return ::sd_notify(0, message.c_str()) > 0;
#else
  (void)message;
  return false;
#endif
}

}  // namespace swthrottle::metrics
