#include "output/exec_job.h"

#include <string_view>

#include "output/record_id.h"
#include "output/writer.h"
#include "util/json.h"

namespace swthrottle::output {

ExecJob exec_job_for(const engine::Record& r, const std::vector<std::string>& argv) {
  ExecJob job;
  job.argv = argv;
  render_with_id(job.stdin_data, r, record_id(r));

  const std::string_view type = engine::to_string(r.type);
  const std::string rule = r.rule != nullptr ? r.rule->name : std::string();
  uint64_t count = 0;
  if (r.type == engine::RecordType::Alert || r.type == engine::RecordType::Resolved) count = r.count;
  if (r.type == engine::RecordType::Summary) count = r.suppressed;
  std::string_view message;
  if (r.has_message) {
    message = r.message;
  } else if (r.type == engine::RecordType::Alert && r.has_line) {
    message = r.line;
  }
  job.env = {
      {"SWTHROTTLE_TYPE", std::string(type)},
      {"SWTHROTTLE_RULE", rule},
      {"SWTHROTTLE_KEY", r.key},
      {"SWTHROTTLE_COUNT", std::to_string(count)},
      {"SWTHROTTLE_MESSAGE", std::string(message)},
  };

  job.label = std::string(type);
  if (!rule.empty()) {
    job.label += ' ';
    append_text_escaped(job.label, rule);
  }
  if (!r.key.empty()) {
    job.label += " key=";
    append_text_escaped(job.label, r.key);
  }
  return job;
}

}  // namespace swthrottle::output
