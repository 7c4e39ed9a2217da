// Reading the values of one rules file's TOML tables (DESIGN.md §1, §7): every
// reader checks a value's type and range and reports what is wrong at
// FILE:LINE:COL, and unknown keys get a did-you-mean. Knows TOML and
// positions, not what the keys mean: settings_parser.h and rule_parser.h do.
//
// Positions: toml++ reports 1-based lines and columns counted in code points.
// Sub-parsers (duration, expr, template, RE2 checks) report a 1-based byte
// offset inside the decoded string value; TomlReader::in_string() maps that
// back into the file, undoing escapes of basic strings.
//
// Internal to src/config/.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <toml++/toml.h>

#include "util/result.h"

namespace swthrottle::config {

struct Pos {
  int line = 0;
  int col = 0;
};

Pos pos_of(const toml::source_region& r);

using MaybeError = std::optional<Error>;

// s in double quotes, with TOML's escapes: "a\"b".
std::string quote(std::string_view s);
// A value as a user would recognise it in "must be ..., not X".
std::string describe(const toml::node& n);
// `"a" or "b"`, `"a", "b" or "c"`.
std::string quoted_choices(const std::vector<std::string>& choices);
std::string join(const std::vector<std::string>& v, std::string_view sep);

// The table's entries in file order (toml++ iterates them sorted by name).
std::vector<std::pair<const toml::key*, const toml::node*>> ordered(const toml::table& t);

// One file's text and name, and readers of its values whose errors point into it.
class TomlReader {
 public:
  TomlReader(std::string_view text, std::string_view file);

  std::string_view text() const { return text_; }
  const std::string& file() const { return file_; }

  Error err(Pos p, std::string what) const { return Error{file_, p.line, p.col, std::move(what)}; }
  Error err(const toml::node& n, std::string what) const { return err(pos_of(n.source()), std::move(what)); }
  Error err(const toml::key& k, std::string what) const { return err(pos_of(k.source()), std::move(what)); }
  // At the 1-based byte offset `col` inside the string value n (0: at n).
  Error err_in(const toml::node& n, int col, std::string what) const { return err(in_string(n, col), std::move(what)); }
  Pos in_string(const toml::node& n, int col) const;

  // The first key of t (in file order) that is not in `allowed`.
  MaybeError unknown_keys(const toml::table& t, const std::vector<std::string>& allowed, std::string_view where) const;
  // A string that is one of `choices`: its index.
  Result<int> choose(const toml::node& v, std::string_view key, const std::vector<std::string>& choices) const;
  // A string that is to_string() of one of `values`: that value. The order of
  // `values` is the order of the choices in the error message.
  template <typename E, std::size_t N>
  Result<E> choose(const toml::node& v, std::string_view key, const std::array<E, N>& values) const {
    std::vector<std::string> names;
    for (E e : values) names.emplace_back(to_string(e));
    auto i = choose(v, key, names);
    if (!i) return std::move(i.error());
    return values[static_cast<std::size_t>(*i)];
  }
  Result<int64_t> integer(const toml::node& v, std::string_view key, int64_t lo, int64_t hi) const;
  // A duration string such as "1h30m" (config/duration.h), in ms.
  Result<int64_t> duration(const toml::node& v, std::string_view key) const;

 private:
  std::string_view text_;
  std::string file_;
  std::vector<std::string_view> lines_;
};

}  // namespace swthrottle::config
