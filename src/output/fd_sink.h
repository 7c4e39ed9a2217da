// FdSink: records rendered onto a file descriptor (stdout), shared by the
// deciders, the timer and the signal thread.
//
// abandon(), at a stop: a write blocked on a full pipe whose reader stopped
// reading holds the sink (and the deciding thread the App's order lock), so
// the stop could never finish. The blocked thread is sent kInterruptSignal,
// whose handler does nothing and is installed without SA_RESTART, so that its
// write(2) returns EINTR and the writer, abandoned, gives up.
#pragma once

#include <pthread.h>

#include <functional>
#include <mutex>
#include <string>

#include "output/sink.h"
#include "output/writer.h"

namespace swthrottle::output {

class FdSink final : public RecordSink {
 public:
  // `report` gets the one message about a write error ("write error: ..."),
  // once; EPIPE ends the output quietly.
  FdSink(int fd, Format format, std::function<void(const std::string&)> report);

  bool write(std::span<const engine::Record> records, std::string_view explain = {}) override;
  bool closed() override;
  bool failed() override;
  bool wrote_alert() override;
  bool abandon(const std::string& why) override;

  // SIGRTMIN (the first real-time signal glibc leaves to programs): its
  // handler is installed by the constructor.
  static int interrupt_signal();

 private:
  std::mutex mu_;  // one caller at a time: records of two calls never interleave
  int fd_;
  FdWriter writer_;
  std::function<void(const std::string&)> report_;
  bool alert_ = false;
  bool reported_ = false;
  // The thread inside write(), for abandon(): guarded by interrupt_mu_, which
  // the writer holds only on entering and leaving (never while it blocks),
  // so that the thread signalled is still inside write().
  std::mutex interrupt_mu_;
  bool writing_ = false;
  pthread_t writer_thread_{};
};

}  // namespace swthrottle::output
