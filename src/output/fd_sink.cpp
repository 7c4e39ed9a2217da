#include "output/fd_sink.h"

#include "util/write_all.h"

namespace swthrottle::output {

FdSink::FdSink(int fd, Format format, std::function<void(const std::string&)> report)
    : fd_(fd), writer_(fd, format), report_(std::move(report)) {}

bool FdSink::write(std::span<const engine::Record> records, std::string_view explain) {
  std::lock_guard lock(mu_);
  if (writer_.closed()) return false;
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
