// The rules file loader (DESIGN.md §1, §7): files -> one RuleSet.
//
// Loading is two passes. parse_file() turns one file's TOML into the settings
// that file gives explicitly plus pending rules whose defaults are not yet
// applied (rule_parser.h); finish_rule() then applies the merged settings.
// The split exists because a rule in b.toml takes its defaults from a
// [settings] in a.toml. The pieces: toml_walk.h (reading values, positions),
// settings_parser.h, rule_parser.h, regex_lint.h, rule_identity.h.
#include "config/rules.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "config/delivery_parser.h"
#include "config/destination_parser.h"
#include "config/fleet_parser.h"
#include "config/rule_parser.h"
#include "config/rules_dir.h"
#include "config/settings_parser.h"
#include "config/toml_walk.h"
#include "util/suggest.h"

namespace swthrottle::config {
namespace {

const std::vector<std::string> kTopKeys{"settings", "rule", "fleet", "delivery"};

struct ParsedFile {
  std::string file;
  Settings settings;
  std::map<std::string, GivenSetting> given;  // the settings this file sets
  std::vector<PendingRule> rules;
};

// toml++'s words for a parse error, and for a bad escape the reason it
// usually has: a regex in "double quotes", where TOML reads \d as an escape.
std::string parse_error_text(std::string_view description) {
  std::string what(description);
  if (what.find("escape sequence") != std::string::npos)
    what +=
        "; in \"double quotes\" a backslash starts an escape: write a regex in 'single quotes' (match = "
        "'port \\d+'), where it is literal";
  return what;
}

// One file's TOML: its settings and pending rules.
Result<ParsedFile> parse_file(std::string_view text, std::string_view file) {
  const TomlReader in(text, file);
  toml::table root;
#if TOML_EXCEPTIONS
  try {
    root = toml::parse(in.text(), std::string_view(in.file()));
  } catch (const toml::parse_error& e) {
    return in.err(pos_of(e.source()), parse_error_text(e.description()));
  }
#else
  toml::parse_result parsed = toml::parse(in.text(), std::string_view(in.file()));
  if (!parsed) return in.err(pos_of(parsed.error().source()), parse_error_text(parsed.error().description()));
  root = std::move(parsed).table();
#endif

  ParsedFile out;
  out.file = in.file();
  for (auto [k, v] : ordered(root)) {
    const std::string key(k->str());
    if (key == "settings" || key == "rule" || key == "fleet" || key == "delivery") continue;
    bool settings_key = std::find(kSettingsKeys.begin(), kSettingsKeys.end(), key) != kSettingsKeys.end();
    bool rule_key = std::find(kRuleKeys.begin(), kRuleKeys.end(), key) != kRuleKeys.end();
    if (settings_key && rule_key && !v->is_table()) {
      return in.err(*k, fmt::format("key {} belongs in [settings] or in a [[rule]]; put it below a [settings] or "
                                    "[[rule]] line",
                                    quote(key)));
    }
    if (settings_key && !v->is_table()) {
      return in.err(*k, fmt::format("key {} belongs in [settings]; put it below a [settings] line", quote(key)));
    }
    if (rule_key && !v->is_table()) {
      return in.err(*k, fmt::format("key {} belongs in a rule; put it below a [[rule]] line", quote(key)));
    }
    return in.err(
        *k, fmt::format(
                "unknown {} {} at the top level{}; only [settings], [fleet], [delivery] and [[rule]] may appear there",
                v->is_table() || v->is_array() ? "table" : "key", quote(key), did_you_mean(key, kTopKeys)));
  }

  if (const toml::node* settings = root.get("settings")) {
    const auto* st = settings->as_table();
    if (st == nullptr) {
      return in.err(*settings, fmt::format("settings must be a table ([settings]), not {}", describe(*settings)));
    }
    if (auto e = parse_settings(in, *st, out.settings, out.given)) return *e;
  }

  if (const toml::node* fleet = root.get("fleet")) {
    if (auto e = parse_fleet(in, *fleet, out.settings.fleet)) return *e;
  }
  if (const toml::node* delivery = root.get("delivery")) {
    if (auto e = parse_delivery(in, *delivery, out.settings.delivery)) return *e;
  }

  if (const toml::node* rules = root.get("rule")) {
    const auto* arr = rules->as_array();
    if (arr == nullptr) {
      if (rules->is_table()) {
        return in.err(root.find("rule")->first, "[rule] must be written [[rule]] (an array of tables, one per rule)");
      }
      return in.err(*rules, fmt::format("rule must be an array of tables ([[rule]]), not {}", describe(*rules)));
    }
    std::map<std::string, Pos> names;
    for (std::size_t i = 0; i < arr->size(); ++i) {
      const toml::node& node = *arr->get(i);
      const auto* rt = node.as_table();
      if (rt == nullptr) return in.err(node, fmt::format("each [[rule]] must be a table, not {}", describe(node)));
      PendingRule pending;
      if (auto e = parse_rule(in, *rt, i, pending)) return *e;
      auto [it, fresh] = names.emplace(pending.rule.name, pending.name_pos);
      if (!fresh) {
        return in.err(pending.name_pos,
                      fmt::format("duplicate rule name {} (first defined at {}:{}:{})", quote(pending.rule.name),
                                  in.file(), it->second.line, it->second.col));
      }
      out.rules.push_back(std::move(pending));
    }
  }
  return out;
}

// A rules file is read whole into memory, so it has a bound (man page,
// FILES): `-r /dev/zero` read forever and grew without one. The largest
// rule sets are some thousand rules, well under a megabyte. Regular files
// and pipes (`-r <(generate-rules)`, /dev/stdin from a pipe) are read; a
// device or a socket is no rules file (/dev/zero, /dev/tty would block).
Result<std::string> read_file(const std::string& path) {
  auto fail = [&](int e) { return Error{path, 0, 0, "cannot read rules file: " + std::string(std::strerror(e))}; };
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(errno);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) return fail(errno);
  if (S_ISDIR(st.st_mode)) return fail(EISDIR);
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode))
    return Error{path, 0, 0,
                 std::string("not a rules file: ") +
                     (S_ISCHR(st.st_mode)    ? "a character device"
                      : S_ISBLK(st.st_mode)  ? "a block device"
                      : S_ISSOCK(st.st_mode) ? "a socket"
                                             : "not a regular file") +
                     " (a rules file is a regular file or a pipe)"};
  const auto too_large = [&] {
    return Error{path, 0, 0, fmt::format("rules file larger than {} MiB", kMaxRulesFileBytes >> 20)};
  };
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > kMaxRulesFileBytes) return too_large();
  std::string out;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(errno);
    }
    if (n == 0) break;
    // A file that grows while read, or a pipe: the bound holds for what is read.
    if (out.size() + static_cast<std::size_t>(n) > kMaxRulesFileBytes) return too_large();
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

void copy_setting(Settings& dst, const Settings& src, const std::string& key) {
  if (key == "mode") dst.mode = src.mode;
  else if (key == "buckets") dst.buckets = src.buckets;
  else if (key == "time") {
    dst.time = src.time;
    dst.time_set = src.time_set;
  } else if (key == "timestamp") dst.timestamp = src.timestamp;
  else if (key == "timezone") dst.timezone = src.timezone;
  else if (key == "year") dst.year = src.year;
  else if (key == "max_keys") dst.max_keys = src.max_keys;
  else if (key == "max_future") dst.max_future_ms = src.max_future_ms;
  else if (key == "max_jump") dst.max_jump_ms = src.max_jump_ms;
  else if (key == "quiet_after") dst.quiet_after_ms = src.quiet_after_ms;
  else if (key == "input") dst.inputs = src.inputs;
  else if (key == "format") dst.format = src.format;
  else if (key == "multiline") dst.multiline = src.multiline;
}

Result<RuleSet> finish(std::vector<ParsedFile>& files, Settings settings) {
  RuleSet set;
  set.settings = std::move(settings);
  for (auto& f : files) {
    for (auto& p : f.rules) {
      auto r = finish_rule(std::move(p), set.settings);
      if (!r) return std::move(r.error());
      set.rules.push_back(std::move(*r));
    }
  }
  if (auto e = check_destinations(set)) return *e;
  return set;
}

}  // namespace

Result<RuleSet> parse_rules(std::string_view toml_text, std::string_view file_name) {
  auto parsed = parse_file(toml_text, file_name);
  if (!parsed) return std::move(parsed.error());
  if (parsed->rules.empty()) return Error{std::string(file_name), 0, 0, "no [[rule]] defined"};
  Settings settings = parsed->settings;
  std::vector<ParsedFile> files;
  files.push_back(std::move(*parsed));
  return finish(files, std::move(settings));
}

Result<RuleSet> load_rules(std::span<const std::string> named) {
  if (named.empty()) return Error{"", 0, 0, "no rules file given"};
  auto expanded = expand_rules_paths(named);
  if (!expanded) return std::move(expanded.error());
  const std::vector<std::string>& paths = *expanded;
  std::vector<ParsedFile> files;
  for (const auto& path : paths) {
    auto text = read_file(path);
    if (!text) return std::move(text.error());
    auto parsed = parse_file(*text, path);
    if (!parsed) return std::move(parsed.error());
    files.push_back(std::move(*parsed));
  }

  Settings merged;
  struct First {
    const std::string* file;
    const GivenSetting* given;
  };
  std::map<std::string, First> first_setting;
  std::map<std::string, std::pair<const std::string*, Pos>> first_rule;
  std::size_t rule_count = 0;
  for (const auto& f : files) {
    std::vector<std::pair<const std::string*, const GivenSetting*>> given;
    for (const auto& [key, g] : f.given) given.emplace_back(&key, &g);
    std::sort(given.begin(), given.end(), [](const auto& a, const auto& b) {
      return a.second->pos.line != b.second->pos.line ? a.second->pos.line < b.second->pos.line
                                                      : a.second->pos.col < b.second->pos.col;
    });
    for (const auto& [key, g] : given) {
      auto [it, fresh] = first_setting.emplace(*key, First{&f.file, g});
      if (fresh) {
        copy_setting(merged, f.settings, *key);
      } else if (it->second.given->canon != g->canon) {
        const GivenSetting& first = *it->second.given;
        return Error{f.file, g->pos.line, g->pos.col,
                     fmt::format("{} = {} conflicts with {} = {} in {}:{}:{}; a setting given in more than one "
                                 "rules file must have the same value in each",
                                 *key, g->shown, *key, first.shown, *it->second.file, first.pos.line, first.pos.col)};
      }
    }
    if (f.settings.fleet.given) {
      if (merged.fleet.given) {
        return Error{f.file, f.settings.fleet.line, f.settings.fleet.col,
                     fmt::format("[fleet] is already given in {}:{}:{}; write it in one rules file only",
                                 merged.fleet.file, merged.fleet.line, merged.fleet.col)};
      }
      merged.fleet = f.settings.fleet;
    }
    if (f.settings.delivery.given) {
      if (merged.delivery.given) {
        return Error{f.file, f.settings.delivery.line, f.settings.delivery.col,
                     fmt::format("[delivery] is already given in {}:{}:{}; write it in one rules file only",
                                 merged.delivery.file, merged.delivery.line, merged.delivery.col)};
      }
      merged.delivery = f.settings.delivery;
    }
    for (const auto& p : f.rules) {
      auto [it, fresh] = first_rule.emplace(p.rule.name, std::make_pair(&f.file, p.name_pos));
      if (!fresh) {
        return Error{f.file, p.name_pos.line, p.name_pos.col,
                     fmt::format("duplicate rule name {} (first defined at {}:{}:{})", quote(p.rule.name),
                                 *it->second.first, it->second.second.line, it->second.second.col)};
      }
    }
    rule_count += f.rules.size();
  }
  if (rule_count == 0) {
    if (paths.size() == 1) return Error{paths[0], 0, 0, "no [[rule]] defined"};
    return Error{"", 0, 0, fmt::format("no [[rule]] defined in any of {}", join({paths.begin(), paths.end()}, ", "))};
  }
  return finish(files, std::move(merged));
}

}  // namespace swthrottle::config
