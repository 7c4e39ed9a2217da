// The command line of --exec (DESIGN.md §5): one string split into argv the way
// a shell would quote it, without running one.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace swthrottle::output {

// Splits `--exec CMD` into argv without a shell, with the shell's quoting:
// blanks (space, tab, newline) separate words; '...' is literal; in "..."
// a backslash escapes only " \ $ ` and newline (a backslash-newline is
// removed); outside quotes a backslash makes the next character literal.
// '' and "" make an empty word. Everything else is literal, including
// * ? [ ~ # (no globbing, no comments).
// Errors (what, with Error::col set, 1-based): an unterminated quote, a
// trailing lone backslash, an empty command, and an unquoted shell operator
// | & ; < > ( ) $ ` (and an unescaped $ or ` inside "...") — without a
// shell these would silently become plain arguments where the user expected
// a pipe, a redirection or an expansion, so the message says what to do:
//   `"|" at column 10 needs a shell: put it in single quotes, or use sh -c '...'`
Result<std::vector<std::string>> split_command(std::string_view cmd);

}  // namespace swthrottle::output
