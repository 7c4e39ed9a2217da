#include "output/fd_sink.h"

#include <signal.h>

#include <chrono>
#include <thread>

#include "util/write_all.h"

namespace swthrottle::output {

namespace {

void interrupted(int) {}  // only to make a blocked write(2) return EINTR

// Marks the calling thread as the one inside write() for as long as it lives.
class Writing {
 public:
  Writing(std::mutex& mu, bool& writing, pthread_t& thread) : mu_(mu), writing_(writing) {
    std::lock_guard lock(mu_);
    writing_ = true;
    thread = pthread_self();
  }
  ~Writing() {
    std::lock_guard lock(mu_);
    writing_ = false;
  }
  Writing(const Writing&) = delete;
  Writing& operator=(const Writing&) = delete;

 private:
  std::mutex& mu_;
  bool& writing_;
};

}  // namespace

int FdSink::interrupt_signal() { return SIGRTMIN; }

FdSink::FdSink(int fd, Format format, std::function<void(const std::string&)> report)
    : fd_(fd), writer_(fd, format), report_(std::move(report)) {
  struct sigaction sa {};
  sa.sa_handler = interrupted;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: the write returns EINTR
  ::sigaction(interrupt_signal(), &sa, nullptr);
}

bool FdSink::abandon(const std::string& why) {
  {
    // Nobody blocked writing: the output still works, and the stop's own
    // records (the pending summaries) must go out.
    std::lock_guard lock(interrupt_mu_);
    if (!writing_) return false;
  }
  if (report_) report_(why);
  writer_.abandon();
  // Signalled until it leaves write(): a signal that came just before it
  // entered write(2) would be missed. Bounded: a writer that does not move
  // is given up on after a second (the caller exits anyway).
  bool was_blocked = false;
  for (int i = 0; i < 100; ++i) {
    {
      std::lock_guard lock(interrupt_mu_);
      if (!writing_) return was_blocked;
      was_blocked = true;
      ::pthread_kill(writer_thread_, interrupt_signal());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return was_blocked;
}

bool FdSink::write(std::span<const engine::Record> records, std::string_view explain) {
  std::lock_guard lock(mu_);
  if (writer_.closed()) return false;
  const Writing writing(interrupt_mu_, writing_, writer_thread_);
  // An --explain block goes out as it is; a failure here shows in the next
  // record's write, which closes the writer.
  if (!explain.empty()) (void)write_all(fd_, explain);
  for (const auto& r : records) {
    if (r.type == engine::RecordType::Alert) alert_ = true;
    if (!writer_.write(r)) break;
  }
  if (writer_.closed() && !writer_.error().empty() && !reported_) {
    reported_ = true;
    if (report_) report_("write error: " + writer_.error());
  }
  return !writer_.closed();
}

bool FdSink::closed() {
  std::lock_guard lock(mu_);
  return writer_.closed();
}

bool FdSink::failed() {
  std::lock_guard lock(mu_);
  return writer_.closed() && !writer_.error().empty();
}

bool FdSink::wrote_alert() {
  std::lock_guard lock(mu_);
  return alert_;
}

}  // namespace swthrottle::output
