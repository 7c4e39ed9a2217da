// backtest/report_text.h: the text report of `swthrottle backtest`, on
// Results built by hand. The checks are about what a reader relies on: no
// line wider than the terminal, no escape without colour, the threshold and
// the alerts where they belong on the timeline, the sweep's bars in
// proportion, the diff cut with a count.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "backtest/report_text.h"
#include "support/text_files.h"

using namespace swthrottle::backtest;
using swthrottle::config::RuleKind;
using swthrottle::test::count_of;
using swthrottle::test::lines_of;

namespace {

constexpr int64_t kMinute = 60'000;
constexpr int64_t kFirst = 1'793'592'000'000;               // 2026-11-02 04:00:00 UTC
constexpr int64_t kLast = kFirst + 248 * kMinute + 12'000;  // 4h 8m 12s later

// Display columns as a test can count them without the code under test:
// code points, ANSI SGR sequences left out.
int columns(std::string_view line) {
  int n = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\x1b') {
      while (i < line.size() && line[i] != 'm') ++i;
      continue;
    }
    n += (static_cast<unsigned char>(line[i]) & 0xC0) != 0x80;
  }
  return n;
}

// The column (in code points) at which `piece` starts in `line`.
int column_of(std::string_view line, std::string_view piece) {
  const std::size_t at = line.find(piece);
  REQUIRE(at != std::string_view::npos);
  return columns(line.substr(0, at));
}

Candidate candidate(std::string value, uint64_t alerts, bool current = false) {
  Candidate c;
  c.value = value;
  c.number = std::stod(value);
  c.window = "1m";
  c.window_ms = kMinute;
  c.current = current;
  c.outcome.alerts = alerts;
  c.outcome.resolved = alerts;
  return c;
}

// An alert rule keyed by ip, threshold 50 per 1m, over a 4-hour log: a count
// of 10 all along with one peak of 100, alerts at the first and the last
// log time, a sweep of four thresholds (the current one 50).
RuleResult alert_rule() {
  RuleResult r;
  r.name = "ssh_bruteforce";
  r.kind = RuleKind::Alert;
  r.condition = "threshold = 50 per 1m";
  r.window = "1m";
  r.window_ms = kMinute;
  r.bucket_ms = 10'000;
  r.threshold = 50;
  r.keyed = true;
  r.keys = 312;
  r.outcome.lines = 12'034;
  r.outcome.events = 12'000;
  r.outcome.alerts = 2;
  r.outcome.resolved = 2;
  r.outcome.suppressed = 40;
  r.outcome.late = 3;
  r.alerts = {{kFirst, "10.0.0.1", 50}, {kLast, "10.0.0.7", 51}};
  r.distribution = {.samples = 4210, .max = 100, .p50 = 10, .p90 = 30, .p99 = 60};
  r.top_keys = {{"10.0.0.1", 100, kFirst + 100 * kMinute, 5'000, 1},
                {"a-very-long-key-" + std::string(150, 'k'), 60, kFirst + 7 * kMinute, 1'203, 1},
                {"日本語のキー", 12, kFirst + 9 * kMinute, 40, 0}};
  r.series.start_ms = kFirst;
  r.series.step_ms = kMinute;
  r.series.max.assign(249, 10);
  r.series.max[100] = 100;
  r.sweep = {candidate("30", 40), candidate("50", 12, true), candidate("80", 2), candidate("120", 0)};
  r.suggestion = "threshold 80 would have raised 2 alerts instead of 12 over this history";
  return r;
}

// A throttle without a key whose events were never counted: no series.
RuleResult quiet_throttle() {
  RuleResult r;
  r.name = "disk_full";
  r.kind = RuleKind::Throttle;
  r.condition = "threshold = 5 per 10m";
  r.window = "10m";
  r.threshold = 5;
  return r;
}

RuleDiff diff_with(std::size_t changes) {
  RuleDiff d;
  d.rule = "ssh_bruteforce";
  d.status = "changed";
  d.old_alerts = 20;
  d.new_alerts = 12;
  for (std::size_t i = 0; i < changes; ++i) {
    DiffChange c;
    c.kind = i % 3 == 0 ? DiffChange::Kind::Added : i % 3 == 1 ? DiffChange::Kind::Removed : DiffChange::Kind::Moved;
    c.key = "10.0.0." + std::to_string(i);
    c.old_ms = kFirst + static_cast<int64_t>(i) * kMinute;
    c.new_ms = c.old_ms + 2 * kMinute;
    (c.kind == DiffChange::Kind::Added ? d.added : c.kind == DiffChange::Kind::Removed ? d.removed : d.moved)++;
    d.changes.push_back(c);
  }
  return d;
}

Report sample() {
  Report result;
  result.inputs = {"/var/log/auth.log", "-"};
  result.rule_files = {"rules.toml"};
  result.lines = 2'000'000;
  result.matched = 12'034;
  result.untimed = 12;
  result.first_ms = kFirst;
  result.last_ms = kLast;
  result.rules = {alert_rule(), quiet_throttle()};
  result.against = "old.toml";
  result.diff = {diff_with(15)};
  return result;
}

// The lines of the first rule's timeline: from its mark row back up to the
// chart's top row.
struct Timeline {
  std::vector<std::string> rows;  // the 8 rows of bars, top first
  std::string axis;               // "└──┬──"
  std::string marks;              // "▲"
};

Timeline first_timeline(const std::vector<std::string>& lines) {
  Timeline t;
  const auto axis =
      std::find_if(lines.begin(), lines.end(), [](const std::string& l) { return l.find("└") != std::string::npos; });
  REQUIRE(axis != lines.end());
  REQUIRE(axis - lines.begin() >= 8);
  t.rows.assign(axis - 8, axis);
  t.axis = *axis;
  REQUIRE(axis + 1 != lines.end());
  t.marks = *(axis + 1);
  return t;
}

// The bars of the sweep's chart, one line per candidate.
std::vector<std::string> sweep_bars(const std::vector<std::string>& lines, std::size_t candidates) {
  const auto title = std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
    return l.find("alerts per candidate") != std::string::npos;
  });
  REQUIRE(title != lines.end());
  REQUIRE(static_cast<std::size_t>(lines.end() - title) > candidates);
  return {title + 1, title + 1 + static_cast<std::ptrdiff_t>(candidates)};
}

int bar_cells(std::string_view line) {
  int n = 0;
  for (std::string_view cell : {"█", "▉", "▊", "▋", "▌", "▍", "▎", "▏"}) n += static_cast<int>(count_of(line, cell));
  return n;
}

}  // namespace

TEST_CASE("backtest render_text: no line is wider than the style's width, with colour or without") {
  Report result = sample();
  // A rule name, a condition and a file name longer than any terminal.
  result.rules[1].name = "rule-" + std::string(300, 'n');
  result.rules[1].condition = "when = " + std::string(250, 'w');
  result.rule_files.push_back("/etc/swthrottle/" + std::string(200, 'f') + ".toml");
  for (int width : {60, 80, 120, 200}) {
    for (bool color : {false, true}) {
      CAPTURE(width);
      CAPTURE(color);
      const std::string text = render_text(result, {width, color});
      for (const std::string& line : lines_of(text)) {
        CAPTURE(line);
        CHECK(columns(line) <= width);
      }
    }
  }
}

TEST_CASE("backtest render_text: the layout fits by itself, the last-resort cut at the width is not needed") {
  // A line the layout made too wide is cut at the end with "…": with
  // ordinary figures and names no line may end so.
  for (int width : {60, 80, 120}) {
    for (bool color : {false, true}) {
      CAPTURE(width);
      CAPTURE(color);
      for (const std::string& line : lines_of(render_text(sample(), {width, color}))) {
        CAPTURE(line);
        const bool cut = line.ends_with("…") || line.ends_with("…\x1b[0m");
        CHECK_FALSE(cut);
      }
    }
  }
}

TEST_CASE("backtest render_text: a rule that could not be swept says why") {
  Report result = sample();
  result.rules[1].not_swept = "its condition has no number to sweep";
  CHECK(render_text(result, {80, false}).find("  not swept: its condition has no number to sweep\n") !=
        std::string::npos);
}

TEST_CASE("backtest render_text: no escape byte without colour, not even from a key, escapes with colour") {
  Report result = sample();
  result.rules[0].top_keys[0].key = "evil\x1b[2Jkey";
  result.diff[0].changes[0].key = "\x1b]0;title\x07";
  const std::string plain = render_text(result, {80, false});
  CHECK(plain.find('\x1b') == std::string::npos);
  CHECK(plain.find('\x07') == std::string::npos);
  CHECK(plain.find("evil\\u001b[2Jkey") != std::string::npos);
  const std::string colored = render_text(result, {80, true});
  CHECK(colored.find("\x1b[1m") != std::string::npos);  // bold headings
  const Timeline t = first_timeline(lines_of(colored));
  CHECK(t.rows[4].find("\x1b[33m┄┄") != std::string::npos);  // the threshold line
  CHECK(t.marks.find("\x1b[31m▲") != std::string::npos);     // the alert marks
  CHECK(colored.find("evil\x1b[2J") == std::string::npos);
}

TEST_CASE("backtest render_text: the header says lines, inputs, the log's span in UTC, and untimed lines") {
  const std::string text = render_text(sample(), {80, false});
  CHECK(text.find("2,000,000 lines") != std::string::npos);
  CHECK(text.find("/var/log/auth.log, standard input") != std::string::npos);
  CHECK(text.find("2026-11-02 04:00:00 .. 2026-11-02 08:08:12 UTC (4h 8m)") != std::string::npos);
  CHECK(text.find("12 lines decided without a timestamp") != std::string::npos);
  CHECK(text.find("untrusted") == std::string::npos);  // 0: not shown
}

TEST_CASE("backtest render_text: per rule, its figures and the distribution of its window count") {
  const std::string text = render_text(sample(), {80, false});
  CHECK(text.find("rule ssh_bruteforce (alert): threshold = 50 per 1m") != std::string::npos);
  CHECK(text.find("matched 12,034 lines, 12,000 events, 312 keys") != std::string::npos);
  CHECK(text.find("2 alerts, 2 resolved, 40 lines held back in cooldown, 3 late") != std::string::npos);
  CHECK(text.find("window count at the close of each bucket with an event (4,210 samples):") != std::string::npos);
  CHECK(text.find("    max 100, p99 60, p90 30, p50 10\n") != std::string::npos);
  CHECK(text.find("0 passed, 0 suppressed, 0 summaries") != std::string::npos);  // the throttle
}

TEST_CASE("backtest render_text: the threshold line lies at its height relative to the maximum") {
  for (uint64_t threshold : {100, 50, 25}) {
    CAPTURE(threshold);
    Report result = sample();
    result.rules[0].threshold = threshold;
    const Timeline t = first_timeline(lines_of(render_text(result, {80, false})));
    std::vector<int> rows_with_line;
    for (std::size_t i = 0; i < t.rows.size(); ++i) {
      if (t.rows[i].find("┄") != std::string::npos) rows_with_line.push_back(static_cast<int>(i));
    }
    // 8 rows for 0..100: the top at 100, the fifth from the top at 50, the seventh at 25.
    const int expected = threshold == 100 ? 0 : threshold == 50 ? 4 : 6;
    CHECK(rows_with_line == std::vector<int>{expected});
  }
}

TEST_CASE(
    "backtest render_text: alerts at the first and the last log time are marked in the first and the last column") {
  for (int width : {60, 80, 120}) {
    CAPTURE(width);
    const Timeline t = first_timeline(lines_of(render_text(sample(), {width, false})));
    const int first_plot_column = column_of(t.axis, "└") + 1;
    const int last_plot_column = columns(t.axis) - 1;
    CHECK(count_of(t.marks, "▲") == 2);
    CHECK(column_of(t.marks, "▲") == first_plot_column);
    CHECK(columns(t.marks) - 1 == last_plot_column);
    CHECK(t.marks.substr(t.marks.size() - std::string_view("▲").size()) == "▲");
  }
}

TEST_CASE("backtest render_text: several alerts in one column are one mark") {
  Report result = sample();
  result.rules[0].alerts = {
      {kFirst + 60 * kMinute, "a", 50}, {kFirst + 60 * kMinute + 1, "b", 50}, {kFirst + 60 * kMinute + 2, "c", 50}};
  const Timeline t = first_timeline(lines_of(render_text(result, {80, false})));
  CHECK(count_of(t.marks, "▲") == 1);
}

TEST_CASE("backtest render_text: the sweep's longest bar is the candidate with the most alerts, 0 alerts, no bar") {
  for (int width : {60, 80, 120}) {
    CAPTURE(width);
    const auto bars = sweep_bars(lines_of(render_text(sample(), {width, false})), 4);
    // Candidates 30, 50, 80, 120 with 40, 12, 2 and 0 alerts.
    CHECK(bar_cells(bars[0]) > bar_cells(bars[1]));
    CHECK(bar_cells(bars[1]) > bar_cells(bars[2]));
    CHECK(bar_cells(bars[2]) > 0);
    CHECK(bar_cells(bars[3]) == 0);
    CHECK(bars[0].find(" 40") != std::string::npos);
    CHECK(bars[3].find(" 0") != std::string::npos);
  }
}

TEST_CASE("backtest render_text: the current candidate is marked in the table and the chart") {
  const auto lines = lines_of(render_text(sample(), {80, false}));
  const auto current = std::find_if(lines.begin(), lines.end(),
                                    [](const std::string& l) { return l.find("(current)") != std::string::npos; });
  REQUIRE(current != lines.end());
  CHECK(current->rfind("  *", 0) == 0);
  CHECK(current->find(" 50 ") != std::string::npos);
  CHECK(std::count_if(lines.begin(), lines.end(),
                      [](const std::string& l) { return l.find("(current)") != std::string::npos; }) == 1);
  const auto bars = sweep_bars(lines, 4);
  CHECK(bars[1].rfind("  * 50", 0) == 0);
  CHECK(bars[0].rfind("    30", 0) == 0);
  CHECK(std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
          return l.find("suggestion: threshold 80") != std::string::npos;
        }) != lines.end());
}

TEST_CASE("backtest render_text: a throttle's sweep charts suppressed lines") {
  Report result = sample();
  RuleResult& throttle = result.rules[1];
  throttle.sweep = {candidate("5", 0, true), candidate("10", 0)};
  throttle.sweep[0].outcome.suppressed = 900;
  throttle.sweep[1].outcome.suppressed = 0;
  const std::string text = render_text(result, {80, false});
  CHECK(text.find("lines suppressed per candidate:") != std::string::npos);
  CHECK(text.find("passed  suppressed  summaries") != std::string::npos);
}

TEST_CASE("backtest render_text: the diff lists its changes up to a cap and counts the rest") {
  Report result = sample();
  const std::string cut = render_text(result, {80, false});
  CHECK(cut.find("rule diff against old.toml") != std::string::npos);
  CHECK(cut.find("  ssh_bruteforce: changed, alerts 20 -> 12\n    0 unchanged, 5 added, 5 removed, 5 moved\n") !=
        std::string::npos);
  CHECK(cut.find("    + 10.0.0.0 at 2026-11-02 04:02:00") != std::string::npos);
  CHECK(cut.find("    - 10.0.0.1 at 2026-11-02 04:01:00") != std::string::npos);
  CHECK(cut.find("    ~ 10.0.0.2 2026-11-02 04:02:00 -> 04:04:00 (+2m)") != std::string::npos);
  CHECK(cut.find("    ... 5 more") != std::string::npos);
  CHECK(cut.find("10.0.0.10 ") == std::string::npos);  // the 11th change is not listed

  result.diff = {diff_with(10)};
  const std::string whole = render_text(result, {80, false});
  CHECK(whole.find("more") == std::string::npos);
  CHECK(whole.find("10.0.0.9 ") != std::string::npos);

  result.against.clear();
  CHECK(render_text(result, {80, false}).find("rule diff") == std::string::npos);
}

TEST_CASE("backtest render_text: a rule without a series says so instead of a chart") {
  const std::string text = render_text(sample(), {80, false});
  const std::size_t throttle = text.find("rule disk_full");
  REQUIRE(throttle != std::string::npos);
  CHECK(text.find("timeline: no window count to chart", throttle) != std::string::npos);
  CHECK(count_of(text, "└") == 1);  // the alert rule's chart only
}

TEST_CASE("backtest render_text: a long key is cut with an ellipsis to keep the table within the width") {
  for (int width : {60, 80, 120}) {
    CAPTURE(width);
    const auto lines = lines_of(render_text(sample(), {width, false}));
    const auto row = std::find_if(lines.begin(), lines.end(),
                                  [](const std::string& l) { return l.find("a-very-long") != std::string::npos; });
    REQUIRE(row != lines.end());
    CHECK(row->find("…") != std::string::npos);
    CHECK(columns(*row) <= width);
    CHECK(row->find(" 1,203 ") != std::string::npos);  // the figures after the key are all there
    // The columns line up: the peak of every row ends where the header's does.
    const auto header = std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
      return l.find("key") != std::string::npos && l.find("peak") != std::string::npos;
    });
    REQUIRE(header != lines.end());
    CHECK(column_of(*row, " 60 ") + 3 == column_of(*header, "peak") + 4);
  }
}

TEST_CASE("backtest render_text: the timeline's legend names the threshold and counts the alerts, marked or not") {
  Report result = sample();
  CHECK(render_text(result, {80, false}).find("\n  ┄ threshold 50, ▲ 2 alerts\n") != std::string::npos);
  // More alerts than marks kept (kMaxMarks): the legend says how many are marked.
  result.rules[0].outcome.alerts = 12'345;
  CHECK(render_text(result, {80, false}).find("▲ 12,345 alerts (first 2 marked)") != std::string::npos);
}

TEST_CASE("backtest render_text: a diff change moved earlier shows a negative shift, one on another day its date") {
  Report result = sample();
  DiffChange earlier{DiffChange::Kind::Moved, "k", kFirst + 90'000, kFirst};
  DiffChange next_day{DiffChange::Kind::Moved, "k", kFirst, kFirst + 86'400'000};
  result.diff[0].changes = {earlier, next_day};
  const std::string text = render_text(result, {80, false});
  CHECK(text.find("    ~ k 2026-11-02 04:01:30 -> 04:00:00 (-1m 30s)\n") != std::string::npos);
  CHECK(text.find("    ~ k 2026-11-02 04:00:00 -> 2026-11-03 04:00:00 (+1d)\n") != std::string::npos);
}

TEST_CASE("backtest render_text: a sweep over several windows names each candidate's window in its bar") {
  Report result = sample();
  result.rules[0].sweep[2].window = "5m";
  const std::string text = render_text(result, {80, false});
  CHECK(text.find("    80 per 5m ") != std::string::npos);
  CHECK(text.find("  * 50 per 1m ") != std::string::npos);
}

TEST_CASE("backtest render_text: odd results still render within the width") {
  std::vector<Report> odd(4);
  // 0: nothing at all. 1: a `when` rule (no threshold) without log times, a one-point series.
  RuleResult when = alert_rule();
  when.threshold.reset();
  when.condition = "when = error >= 3 (window 1m)";
  when.series.max = {7};
  odd[1].rules = {when};
  // 2: counts at the top of uint64_t, every figure large.
  RuleResult huge = alert_rule();
  huge.series.max = {UINT64_MAX, 1, UINT64_MAX / 2};
  huge.threshold = UINT64_MAX / 4;
  huge.outcome.alerts = UINT64_MAX;
  huge.top_keys[0].peak = UINT64_MAX;
  huge.sweep[0].outcome.alerts = UINT64_MAX;
  odd[2] = sample();
  odd[2].rules = {huge};
  // 3: every time at the same instant.
  odd[3] = sample();
  odd[3].last_ms = odd[3].first_ms;
  odd[3].rules[0].alerts = {{kFirst, "k", 1}};
  for (std::size_t i = 0; i < odd.size(); ++i) {
    for (int width : {60, 80}) {
      CAPTURE(i);
      CAPTURE(width);
      const std::string text = render_text(odd[i], {width, false});
      CHECK(text.find("backtest:") == 0);
      for (const std::string& line : lines_of(text)) {
        CAPTURE(line);
        CHECK(columns(line) <= width);
      }
    }
  }
  const std::string one_point = render_text(odd[1], {80, false});
  CHECK(one_point.find("log time: none read") != std::string::npos);
  CHECK(one_point.find("┄") == std::string::npos);  // no threshold, no line
  CHECK(one_point.find("└") != std::string::npos);
}
