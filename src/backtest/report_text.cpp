#include "backtest/report_text.h"

#include <algorithm>

#include <fmt/format.h>

#include "backtest/terminal_chart.h"
#include "backtest/terminal_text.h"

namespace swthrottle::backtest {
namespace {

constexpr std::string_view kBold = "\x1b[1m";
constexpr std::string_view kRed = "\x1b[31m";
constexpr std::string_view kYellow = "\x1b[33m";
constexpr std::string_view kCurrent = "\x1b[1;36m";  // the current candidate of a sweep
constexpr std::string_view kReset = "\x1b[0m";

constexpr int kTimelineRows = 8;
// Changes listed per rule of the diff; the rest are counted ("... N more").
constexpr std::size_t kDiffChangesShown = 10;

// The report as it is written: lines of at most `width` columns, painted
// only when colour is on. Text that comes from the user (rule names, keys,
// file names) goes through wrap_words or fit_columns, which make it
// terminal_safe, so no line can carry an escape it did not put there.
class Page {
 public:
  explicit Page(const TextStyle& style) : width_(std::max(style.width, 1)), color_(style.color) {}

  int width() const { return width_; }

  // `sgr` around `text`, or the text alone without colour.
  std::string paint(std::string_view sgr, std::string_view text) const {
    if (!color_ || text.empty()) return std::string(text);
    return fmt::format("{}{}{}", sgr, text, kReset);
  }

  // Prose, wrapped at word boundaries.
  void prose(std::string_view text, std::string_view first_indent = "", std::string_view indent = "    ") {
    for (std::string& l : wrap_words(text, width_, first_indent, indent)) line(l);
  }

  // A heading: prose in bold.
  void heading(std::string_view text, std::string_view indent = "") {
    for (std::string& l : wrap_words(text, width_, indent, std::string(indent) + "  ")) line(paint(kBold, l));
  }

  // A line already made to fit (a table row, a chart line). Cut all the
  // same when it does not: only figures near 2^64 make a table that wide,
  // and no line may be wider than the terminal.
  void line(std::string_view text) {
    out_ += cut_columns(text, width_);
    out_ += '\n';
  }

  void blank() { out_ += '\n'; }

  ChartInk ink() const {
    if (!color_) return {};
    return {kYellow, kRed, kReset};
  }

  std::string take() { return std::move(out_); }

 private:
  int width_;
  bool color_;
  std::string out_;
};

std::string plural(uint64_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", grouped(n), n == 1 ? one : many);
}

bool is_throttle(const RuleResult& r) { return r.kind == config::RuleKind::Throttle; }

// --- the header -------------------------------------------------------------

std::string joined(const std::vector<std::string>& items) {
  std::string s;
  for (const std::string& item : items) {
    if (!s.empty()) s += ", ";
    s += item == "-" ? "standard input" : item;
  }
  return s;
}

void write_header(Page& page, const Report& result) {
  page.heading(fmt::format("backtest: {}, {} matched by a rule", plural(result.lines, "line", "lines"),
                           grouped(result.matched)));
  if (!result.inputs.empty()) page.prose("inputs: " + joined(result.inputs), "", "  ");
  if (!result.rule_files.empty()) page.prose("rules: " + joined(result.rule_files), "", "  ");
  if (result.first_ms >= 0 && result.last_ms >= result.first_ms) {
    // The span stays whole: on its own line when the times leave no room.
    const std::string times =
        fmt::format("log time: {} .. {} UTC", utc_time(result.first_ms), utc_time(result.last_ms));
    const std::string span = fmt::format("({})", span_text(result.last_ms - result.first_ms));
    if (display_columns(times) + 1 + display_columns(span) <= page.width()) {
      page.prose(times + " " + span);
    } else {
      page.prose(times, "", "  ");
      page.line("  " + span);
    }
  } else {
    page.prose("log time: none read", "", "  ");
  }
  if (result.untimed > 0 || result.untrusted > 0) {
    std::string s;
    if (result.untimed > 0) s = fmt::format("{} decided without a timestamp", plural(result.untimed, "line", "lines"));
    if (result.untrusted > 0) {
      if (!s.empty()) s += ", ";
      s += fmt::format("{} with an untrusted timestamp", plural(result.untrusted, "line", "lines"));
    }
    page.prose(s, "", "  ");
  }
}

// --- a rule -----------------------------------------------------------------

void write_outcome(Page& page, const RuleResult& rule) {
  const Outcome& o = rule.outcome;
  std::string counts = "matched " + plural(o.lines, "line", "lines");
  if (!is_throttle(rule)) counts += ", " + plural(o.events, "event", "events");
  if (rule.keyed) counts += ", " + plural(rule.keys, "key", "keys");
  page.prose(counts, "  ");

  std::string figures;
  if (is_throttle(rule)) {
    figures = fmt::format("{} passed, {} suppressed, {}", grouped(o.passed), grouped(o.suppressed),
                          plural(o.summaries, "summary", "summaries"));
  } else {
    figures = fmt::format("{}, {} resolved, {} held back in cooldown", plural(o.alerts, "alert", "alerts"),
                          grouped(o.resolved), plural(o.suppressed, "line", "lines"));
  }
  if (o.late > 0) figures += fmt::format(", {} late", grouped(o.late));  // older than the window: not counted
  page.prose(figures, "  ");
}

void write_distribution(Page& page, const RuleResult& rule) {
  const Distribution& d = rule.distribution;
  if (d.samples == 0) {
    page.prose("window count: no event counted", "  ");
    return;
  }
  page.prose(fmt::format("window count at the close of each bucket with an event ({}):",
                         plural(d.samples, "sample", "samples")),
             "  ");
  page.prose(
      fmt::format("max {}, p99 {}, p90 {}, p50 {}", grouped(d.max), grouped(d.p99), grouped(d.p90), grouped(d.p50)),
      "    ");
}

// The top keys as a table: the key column takes what the numbers leave.
void write_top_keys(Page& page, const RuleResult& rule) {
  if (!rule.keyed || rule.top_keys.empty()) return;
  const bool throttle = is_throttle(rule);
  const std::string events_title = throttle ? "lines" : "events";
  const std::string alerts_title = throttle ? "summaries" : "alerts";
  int peak_w = 4, events_w = static_cast<int>(events_title.size()), alerts_w = static_cast<int>(alerts_title.size());
  int key_w = 3;
  for (const KeyPeak& k : rule.top_keys) {
    peak_w = std::max(peak_w, display_columns(grouped(k.peak)));
    events_w = std::max(events_w, display_columns(grouped(k.events)));
    alerts_w = std::max(alerts_w, display_columns(grouped(k.alerts)));
    key_w = std::max(key_w, display_columns(terminal_safe(k.key.empty() ? "(no key)" : k.key)));
  }
  constexpr int kIndent = 4, kGap = 2, kWhenWidth = 19;  // "2026-11-02 04:13:00"
  const int fixed = kIndent + peak_w + kWhenWidth + events_w + alerts_w + 4 * kGap;
  key_w = std::clamp(key_w, 3, std::max(page.width() - fixed, 3));

  const auto row = [&](std::string_view key, std::string_view peak, std::string_view when, std::string_view events,
                       std::string_view alerts) {
    return fmt::format("    {}  {}  {}  {}  {}", pad_right(key, key_w), pad_left(peak, peak_w),
                       pad_right(when, kWhenWidth), pad_left(events, events_w), pad_left(alerts, alerts_w));
  };
  page.line(fmt::format("  top keys ({} of {}):", grouped(rule.top_keys.size()), grouped(rule.keys)));
  page.line(page.paint(kBold, row("key", "peak", "first at peak (UTC)", events_title, alerts_title)));
  for (const KeyPeak& k : rule.top_keys) {
    page.line(row(fit_columns(k.key.empty() ? "(no key)" : k.key, key_w), grouped(k.peak), utc_time(k.peak_t_ms),
                  grouped(k.events), grouped(k.alerts)));
  }
}

void write_timeline(Page& page, const Report& result, const RuleResult& rule) {
  const Series& s = rule.series;
  if (s.max.empty() || s.step_ms <= 0) {
    page.prose("timeline: no window count to chart (no event was counted)", "  ");
    return;
  }
  page.prose("timeline: highest window count of any key over log time", "  ");
  TimelineSpec spec;
  spec.points = s.max;
  spec.start_ms = s.start_ms;
  spec.step_ms = s.step_ms;
  // The log's span when there is one, so that the timelines of all rules
  // share their time axis; else the series' own.
  if (result.first_ms >= 0 && result.last_ms >= result.first_ms) {
    spec.first_ms = result.first_ms;
    spec.last_ms = result.last_ms;
  } else {
    spec.first_ms = s.start_ms;
    spec.last_ms = s.start_ms + static_cast<int64_t>(s.max.size()) * s.step_ms - 1;
  }
  spec.threshold = rule.threshold;
  for (const AlertMark& a : rule.alerts) spec.marks.push_back(a.t_ms);
  spec.width = page.width() - 2;
  spec.rows = kTimelineRows;
  for (const std::string& l : timeline_chart(spec, page.ink())) page.line("  " + l);

  // The legend, under the chart where the marks are: wrapped as plain
  // text, then its symbols painted as the chart paints them.
  std::string legend;
  if (rule.threshold) legend = fmt::format("┄ threshold {}", grouped(*rule.threshold));
  if (!is_throttle(rule)) {
    if (!legend.empty()) legend += ", ";
    legend += "▲ " + plural(rule.outcome.alerts, "alert", "alerts");
    if (rule.alerts.size() < rule.outcome.alerts)
      legend += fmt::format(" (first {} marked)", grouped(rule.alerts.size()));
  }
  if (legend.empty()) return;
  for (std::string& l : wrap_words(legend, page.width(), "  ", "    ")) {
    for (const auto& [symbol, sgr] :
         {std::pair{std::string_view("┄"), kYellow}, std::pair{std::string_view("▲"), kRed}}) {
      const std::size_t at = l.find(symbol);
      if (at != std::string::npos) l.replace(at, symbol.size(), page.paint(sgr, symbol));
    }
    page.line(l);
  }
}

// What a candidate is called in the sweep's bar chart: its threshold, and
// its window when the sweep tries several.
std::string candidate_label(const Candidate& c, bool several_windows) {
  return several_windows ? fmt::format("{} per {}", c.value, c.window) : c.value;
}

void write_sweep(Page& page, const RuleResult& rule) {
  if (!rule.not_swept.empty()) page.prose("not swept: " + rule.not_swept, "  ");
  if (rule.sweep.empty()) return;
  const bool throttle = is_throttle(rule);
  bool several_windows = false;
  for (const Candidate& c : rule.sweep) several_windows |= c.window != rule.sweep.front().window;

  // The table: one row per candidate, "*" and "(current)" on the rule's own.
  std::vector<std::string> titles = {"threshold", "window"};
  if (throttle) titles.insert(titles.end(), {"passed", "suppressed", "summaries"});
  else titles.insert(titles.end(), {"alerts", "resolved"});
  std::vector<std::vector<std::string>> cells;
  for (const Candidate& c : rule.sweep) {
    const Outcome& o = c.outcome;
    std::vector<std::string> row = {terminal_safe(c.value), terminal_safe(c.window)};
    if (throttle) row.insert(row.end(), {grouped(o.passed), grouped(o.suppressed), grouped(o.summaries)});
    else row.insert(row.end(), {grouped(o.alerts), grouped(o.resolved)});
    cells.push_back(std::move(row));
  }
  std::vector<int> widths;
  for (const std::string& t : titles) widths.push_back(display_columns(t));
  for (const auto& row : cells) {
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], display_columns(row[i]));
  }
  // The threshold and window columns give way when a value written in the
  // rules is too long to leave the numbers their room.
  int numbers = 0;
  for (std::size_t i = 2; i < widths.size(); ++i) numbers += widths[i] + 2;
  const int room = page.width() - 6 - numbers - 2 - static_cast<int>(std::string_view(" (current)").size());
  widths[0] = std::min(widths[0], std::max(room / 2, 4));
  widths[1] = std::min(widths[1], std::max(room - widths[0], 4));
  const auto format_row = [&](std::string_view mark, const std::vector<std::string>& row) {
    std::string s = fmt::format("  {} ", mark);
    for (std::size_t i = 0; i < row.size(); ++i) {
      s += "  ";
      s += i < 2 ? pad_right(fit_columns(row[i], widths[i]), widths[i]) : pad_left(row[i], widths[i]);
    }
    return s;
  };
  page.prose(fmt::format("sweep: {}", plural(rule.sweep.size(), "candidate", "candidates")), "  ");
  page.line(page.paint(kBold, format_row(" ", titles)));
  for (std::size_t i = 0; i < rule.sweep.size(); ++i) {
    if (rule.sweep[i].current) page.line(page.paint(kCurrent, format_row("*", cells[i]) + " (current)"));
    else page.line(format_row(" ", cells[i]));
  }

  // The bar chart: alerts (throttles: suppressed lines) per candidate, the
  // longest bar for the most, none for 0, the count after each bar.
  const auto figure = [&](const Candidate& c) { return throttle ? c.outcome.suppressed : c.outcome.alerts; };
  uint64_t most = 0;
  int label_w = 1, count_w = 1;
  for (const Candidate& c : rule.sweep) {
    most = std::max(most, figure(c));
    label_w = std::max(label_w, display_columns(terminal_safe(candidate_label(c, several_windows))));
    count_w = std::max(count_w, display_columns(grouped(figure(c))));
  }
  label_w = std::min(label_w, page.width() / 4);
  const int bar_w = std::max(page.width() - 4 - label_w - 1 - 1 - count_w, 1);
  page.prose(throttle ? "lines suppressed per candidate:" : "alerts per candidate:", "  ");
  for (const Candidate& c : rule.sweep) {
    const std::string bar = horizontal_bar(figure(c), most, bar_w);
    std::string l = fmt::format("  {} {} {}{}{}", c.current ? "*" : " ",
                                pad_right(fit_columns(candidate_label(c, several_windows), label_w), label_w), bar,
                                bar.empty() ? "" : " ", grouped(figure(c)));
    page.line(c.current ? page.paint(kCurrent, l) : l);
  }
  if (!rule.suggestion.empty()) page.prose("suggestion: " + rule.suggestion, "  ");
}

void write_rule(Page& page, const Report& result, const RuleResult& rule) {
  page.blank();
  page.heading(fmt::format("rule {} ({}): {}", rule.name, to_string(rule.kind), rule.condition));
  write_outcome(page, rule);
  write_distribution(page, rule);
  write_top_keys(page, rule);
  write_timeline(page, result, rule);
  write_sweep(page, rule);
}

// --- the rule diff ----------------------------------------------------------

// "+2m", "-1m 30s", "0s".
std::string signed_span(int64_t ms) { return (ms < 0 ? "-" : "+") + span_text(ms < 0 ? -ms : ms); }

// One change as a line: `prefix` + the key cut to what the rest leaves.
std::string change_line(const Page& page, const DiffChange& c) {
  std::string head, tail;
  switch (c.kind) {
    case DiffChange::Kind::Added:
      head = "    + ";
      tail = " at " + utc_time(c.new_ms);
      break;
    case DiffChange::Kind::Removed:
      head = "    - ";
      tail = " at " + utc_time(c.old_ms);
      break;
    case DiffChange::Kind::Moved: {
      const std::string from = utc_time(c.old_ms), to = utc_time(c.new_ms);
      // The new time's date only when it differs from the old one's.
      const std::string to_shown = from.substr(0, 10) == to.substr(0, 10) ? to.substr(11) : to;
      head = "    ~ ";
      tail = fmt::format(" {} -> {} ({})", from, to_shown, signed_span(c.new_ms - c.old_ms));
      break;
    }
  }
  const int key_w = std::max(page.width() - display_columns(head) - display_columns(tail), 1);
  return head + fit_columns(c.key.empty() ? "(no key)" : c.key, key_w) + tail;
}

void write_diff(Page& page, const Report& result) {
  if (result.against.empty()) return;
  page.blank();
  page.heading("rule diff against " + result.against);
  for (const RuleDiff& d : result.diff) {
    page.prose(fmt::format("{}: {}, alerts {} -> {}", d.rule, d.status, grouped(d.old_alerts), grouped(d.new_alerts)),
               "  ");
    page.prose(fmt::format("{} unchanged, {} added, {} removed, {} moved", grouped(d.unchanged), grouped(d.added),
                           grouped(d.removed), grouped(d.moved)),
               "    ");
    const std::size_t shown = std::min(d.changes.size(), kDiffChangesShown);
    for (std::size_t i = 0; i < shown; ++i) page.line(change_line(page, d.changes[i]));
    // Counted from the figures, not the list: the list stops at kMaxMarks.
    const uint64_t total = std::max<uint64_t>(d.added + d.removed + d.moved, d.changes.size());
    if (total > shown) page.line(fmt::format("    ... {} more", grouped(total - shown)));
  }
}

}  // namespace

std::string render_text(const Report& result, const TextStyle& style) {
  Page page(style);
  write_header(page, result);
  for (const RuleResult& rule : result.rules) write_rule(page, result, rule);
  write_diff(page, result);
  return page.take();
}

}  // namespace swthrottle::backtest
