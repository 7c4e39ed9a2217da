// FdSink: records rendered onto a file descriptor (stdout), shared by the
// deciders, the timer and the signal thread.
#pragma once

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

 private:
  std::mutex mu_;  // one caller at a time: records of two calls never interleave
  int fd_;
  FdWriter writer_;
  std::function<void(const std::string&)> report_;
  bool alert_ = false;
  bool reported_ = false;
};

}  // namespace swthrottle::output
