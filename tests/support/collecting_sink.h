// CollectingSink: a RecordSink that keeps what it is given, rendered (records
// only view their line, so they are rendered at once), for tests of code
// that writes records.
#pragma once

#include <mutex>
#include <string>

#include "output/sink.h"
#include "output/writer.h"

namespace swthrottle::test {

class CollectingSink final : public output::RecordSink {
 public:
  explicit CollectingSink(output::Format format = output::Format::Text) : format_(format) {}

  bool write(std::span<const engine::Record> records, std::string_view explain = {}) override {
    std::lock_guard lock(mu_);
    if (closed_) return false;
    text_ += explain;
    for (const auto& r : records) {
      if (r.type == engine::RecordType::Alert) alert_ = true;
      output::render(text_, r, format_);
    }
    return true;
  }
  bool closed() override {
    std::lock_guard lock(mu_);
    return closed_;
  }
  bool failed() override { return false; }
  bool wrote_alert() override {
    std::lock_guard lock(mu_);
    return alert_;
  }

  // The reader goes away: every later write() returns false.
  void close() {
    std::lock_guard lock(mu_);
    closed_ = true;
  }
  std::string text() {
    std::lock_guard lock(mu_);
    return text_;
  }

 private:
  std::mutex mu_;
  output::Format format_;
  std::string text_;
  bool closed_ = false;
  bool alert_ = false;
};

}  // namespace swthrottle::test
