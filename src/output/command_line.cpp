#include "output/command_line.h"

#include <utility>

namespace swthrottle::output {

Result<std::vector<std::string>> split_command(std::string_view cmd) {
  auto fail = [](std::size_t pos, std::string what) {
    Error e;
    e.col = static_cast<int>(pos) + 1;
    e.what = std::move(what);
    return e;
  };
  auto is_blank = [](char c) { return c == ' ' || c == '\t' || c == '\n'; };
  auto needs_shell = [](std::size_t pos, char c) {
    Error e;
    e.col = static_cast<int>(pos) + 1;
    e.what = "\"" + std::string(1, c) + "\" at column " + std::to_string(pos + 1) +
             " needs a shell: put it in single quotes, or use sh -c '...'";
    return e;
  };

  std::vector<std::string> words;
  std::string word;
  bool in_word = false;  // a word has started (it may still be empty: '')
  std::size_t i = 0;
  while (i < cmd.size()) {
    const char c = cmd[i];
    if (is_blank(c)) {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      ++i;
      continue;
    }
    if (c == '\'') {
      const std::size_t close = cmd.find('\'', i + 1);
      if (close == std::string_view::npos) {
        return fail(i, "unterminated single quote (opened at column " + std::to_string(i + 1) + ")");
      }
      word.append(cmd.substr(i + 1, close - i - 1));
      in_word = true;
      i = close + 1;
      continue;
    }
    if (c == '"') {
      const std::size_t open = i;
      ++i;
      bool closed = false;
      while (i < cmd.size()) {
        const char d = cmd[i];
        if (d == '"') {
          closed = true;
          ++i;
          break;
        }
        if (d == '\\' && i + 1 < cmd.size()) {
          const char e = cmd[i + 1];
          if (e == '\n') {
            i += 2;  // line continuation
            continue;
          }
          if (e == '"' || e == '\\' || e == '$' || e == '`') {
            word += e;
            i += 2;
            continue;
          }
        }
        if (d == '$' || d == '`') return needs_shell(i, d);  // a shell would expand it here too
        word += d;
        ++i;
      }
      if (!closed) {
        return fail(open, "unterminated double quote (opened at column " + std::to_string(open + 1) + ")");
      }
      in_word = true;
      continue;
    }
    if (c == '\\') {
      if (i + 1 >= cmd.size()) return fail(i, "backslash at the end of the command");
      if (cmd[i + 1] != '\n') {
        word += cmd[i + 1];
        in_word = true;
      }
      i += 2;
      continue;
    }
    if (std::string_view("|&;<>()$`").find(c) != std::string_view::npos) {
      return needs_shell(i, c);
    }
    word += c;
    in_word = true;
    ++i;
  }
  if (in_word) words.push_back(std::move(word));
  if (words.empty()) return fail(0, "empty command");
  return words;
}

}  // namespace swthrottle::output
