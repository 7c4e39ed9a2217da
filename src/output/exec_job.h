// What an exec action runs for one record (DESIGN.md §5): the command, the record
// as JSON on its stdin, and SWTHROTTLE_* variables.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "engine/record.h"

namespace swthrottle::output {

// One command to run for one record.
struct ExecJob {
  std::vector<std::string> argv;                         // argv[0] is looked up in PATH (posix_spawnp); no shell
  std::string stdin_data;                                // written to the child's stdin, which is then closed
  std::vector<std::pair<std::string, std::string>> env;  // added to (and overriding) the environment
  std::string label;                                     // names the job in reports: "alert ssh key=1.2.3.4"
};

// The job for one record: `argv`, the record as a JSON line on stdin (with
// the "id" webhooks get first: output/record_id.h), and
// SWTHROTTLE_TYPE (alert|resolved|summary|line), _RULE (the rule's name,
// "" when none), _KEY, _COUNT (count for alert and resolved, suppressed
// for summary, 0 for line) and _MESSAGE (the rendered message; for an
// alert of a rule without one, the triggering line, the text format's
// choice; else ""). The values are the raw text, not escaped. An
// environment cannot hold NUL bytes: a value stops at its first NUL. The
// label reads "TYPE RULE key=KEY" (" key=KEY" left out when the key is "",
// and " RULE" when there is no rule), on one line, the rule and key escaped
// as in a text record (append_text_escaped): the label goes to stderr, a
// terminal too.
ExecJob exec_job_for(const engine::Record& r, const std::vector<std::string>& argv);

}  // namespace swthrottle::output
