#include "backtest/report_html.h"

#include <algorithm>

#include <fmt/format.h>

#include "backtest/html_escape.h"
#include "backtest/svg_chart.h"
#include "config/duration.h"
#include "util/json.h"

namespace swthrottle::backtest {

namespace {

// At most this many changes of a rule are listed in the diff; the rest are
// counted ("N more"). The full list is in the JSON report.
constexpr std::size_t kMaxChangesShown = 100;

// The whole style sheet. Nothing in it is fetched (no font, no url()), and
// no colour of svg_chart.h is used for anything but what it stands for:
// the current row of a sweep table is marked in grey and bold, never orange.
constexpr std::string_view kStyle = R"(
body { background: #ffffff; color: #222222; margin: 16px 24px; max-width: 940px;
       font: 14px/1.4 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; }
h1 { font-size: 20px; margin: 0 0 6px; }
h2 { font-size: 17px; margin: 22px 0 4px; padding-top: 10px; border-top: 1px solid #dddddd; }
h3 { font-size: 14px; margin: 12px 0 4px; }
p { margin: 4px 0; }
table { border-collapse: collapse; margin: 4px 0; }
caption { text-align: left; font-weight: bold; }
th, td { padding: 1px 10px 1px 0; text-align: right; border-bottom: 1px solid #eeeeee; vertical-align: top; }
th { font-weight: 600; }
th:first-child, td:first-child, td.text { text-align: left; }
tr.current td { font-weight: bold; background: #f2f2f2; }
.cols { display: flex; gap: 40px; flex-wrap: wrap; }
.kind { font-weight: normal; color: #666666; font-size: 14px; }
.muted { color: #666666; }
.legend span.swatch { display: inline-block; width: 12px; height: 10px; margin: 0 4px 0 12px; }
svg { display: block; max-width: 100%; height: auto; font: 11px sans-serif; }
ul.changes { margin: 4px 0; padding-left: 20px; font-family: monospace; }
code { font-family: monospace; }
)";

void esc(std::string& out, std::string_view s) { append_html_escaped(out, s); }

std::string utc(int64_t ms) {
  std::string s;
  append_rfc3339_ms(s, ms);
  return s;
}

std::string duration_or_dash(int64_t ms) { return ms > 0 ? config::format_duration(ms) : "-"; }

// One row of a two-column figures table.
void figure_row(std::string& out, std::string_view name, uint64_t value) {
  out += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", name, value);
}

void header(std::string& out, const Report& r) {
  out += "<header>\n<h1>swthrottle backtest</h1>\n<table class=\"facts\">\n<tr><th>inputs</th><td class=\"text\">";
  for (std::size_t i = 0; i < r.inputs.size(); ++i) {
    if (i > 0) out += ", ";
    out += "<code>";
    esc(out, r.inputs[i] == "-" ? "- (standard input)" : r.inputs[i]);
    out += "</code>";
  }
  out += "</td></tr>\n";
  if (!r.rule_files.empty()) {
    out += "<tr><th>rules</th><td class=\"text\">";
    for (std::size_t i = 0; i < r.rule_files.size(); ++i) {
      if (i > 0) out += ", ";
      out += "<code>";
      esc(out, r.rule_files[i]);
      out += "</code>";
    }
    out += "</td></tr>\n";
  }
  out += fmt::format("<tr><th>lines</th><td class=\"text\">{} ({} matched by a rule", r.lines, r.matched);
  if (r.untimed > 0) out += fmt::format(", {} without a timestamp", r.untimed);
  if (r.untrusted > 0) out += fmt::format(", {} with an untrusted timestamp", r.untrusted);
  out += ")</td></tr>\n<tr><th>log time</th><td class=\"text\">";
  if (r.first_ms < 0 || r.last_ms < r.first_ms) {
    out += "none seen";
  } else {
    out += fmt::format("{} to {} (UTC), {}", utc(r.first_ms), utc(r.last_ms),
                       r.last_ms > r.first_ms ? config::format_duration(r.last_ms - r.first_ms) : "one instant");
  }
  out += "</td></tr>\n</table>\n";
  // Links inside the page only: it must work as an attachment, offline.
  if (r.rules.size() > 1 || !r.diff.empty()) {
    out += "<p class=\"toc\">";
    for (std::size_t i = 0; i < r.rules.size(); ++i) {
      out += fmt::format("<a href=\"#rule-{}\">", i);
      esc(out, r.rules[i].name);
      out += "</a> ";
    }
    if (!r.diff.empty()) out += "<a href=\"#diff\">rule diff</a>";
    out += "</p>\n";
  }
  out += "</header>\n";
}

void outcome_table(std::string& out, const RuleResult& rule) {
  const Outcome& o = rule.outcome;
  out += "<table class=\"figures\"><caption>Outcome</caption>\n";
  if (rule.kind == config::RuleKind::Throttle) {
    figure_row(out, "passed", o.passed);
    figure_row(out, "suppressed", o.suppressed);
    figure_row(out, "summaries", o.summaries);
    figure_row(out, "lines", o.lines);
  } else {
    figure_row(out, "alerts", o.alerts);
    figure_row(out, "resolved", o.resolved);
    figure_row(out, "held back", o.suppressed);
    figure_row(out, "events", o.events);
    figure_row(out, "lines", o.lines);
  }
  if (o.late > 0) figure_row(out, "late", o.late);
  if (rule.keyed) figure_row(out, "keys", rule.keys);
  out += "</table>\n";
}

void distribution_table(std::string& out, const Distribution& d) {
  out += "<table class=\"distribution\"><caption>Window count</caption>\n";
  if (d.samples == 0) {
    out += "<tr><td class=\"text muted\">no event was counted</td></tr>\n";
  } else {
    figure_row(out, "max", d.max);
    figure_row(out, "p99", d.p99);
    figure_row(out, "p90", d.p90);
    figure_row(out, "p50", d.p50);
    figure_row(out, "samples", d.samples);
  }
  out += "</table>\n";
}

std::string mark_title(const AlertMark& m) {
  std::string t = utc(m.t_ms);
  if (!m.key.empty()) t += " key " + m.key;  // escaped by the chart
  t += fmt::format(", count {}", m.count);
  return t;
}

void swatch(std::string& out, std::string_view color, std::string_view what) {
  out += fmt::format("<span class=\"swatch\" style=\"background: {}\"></span>{}", color, what);
}

void timeline(std::string& out, const RuleResult& rule) {
  out += "<h3>Timeline</h3>\n";
  std::vector<TimeMark> marks;
  marks.reserve(rule.alerts.size());
  for (const AlertMark& m : rule.alerts) marks.push_back(TimeMark{m.t_ms, mark_title(m)});
  TimelineChart chart;
  chart.start_ms = rule.series.start_ms;
  chart.step_ms = rule.series.step_ms;
  chart.max = rule.series.max;
  chart.threshold = rule.threshold;
  chart.marks = marks;
  out += timeline_svg(chart);
  // The legend names only what is drawn, so a page with no threshold and no
  // alert has no red on it at all.
  out += "<p class=\"legend muted\">";
  swatch(out, kSeriesColor, fmt::format("highest window count per {}", duration_or_dash(rule.series.step_ms)));
  if (rule.threshold) swatch(out, kAlertColor, "threshold (dashed)");
  if (!rule.alerts.empty()) swatch(out, kAlertColor, "alert (triangle)");
  out += "</p>\n";
  if (rule.outcome.alerts > rule.alerts.size() && rule.kind == config::RuleKind::Alert) {
    out += fmt::format("<p class=\"muted\">The first {} of {} alerts are marked.</p>\n", rule.alerts.size(),
                       rule.outcome.alerts);
  }
}

void sweep(std::string& out, const RuleResult& rule) {
  if (rule.sweep.empty()) {
    if (!rule.not_swept.empty()) {
      out += "<h3>Sweep</h3>\n<p class=\"not-swept\">Not swept: ";
      esc(out, rule.not_swept);
      out += "</p>\n";
    }
    return;
  }
  const bool throttle = rule.kind == config::RuleKind::Throttle;
  // With --sweep-window the candidates differ in their window too, and the
  // bar labels must say which.
  const bool windows_vary = std::any_of(rule.sweep.begin(), rule.sweep.end(),
                                        [&](const Candidate& c) { return c.window != rule.sweep.front().window; });
  std::vector<Bar> bars;
  bars.reserve(rule.sweep.size());
  for (const Candidate& c : rule.sweep) {
    Bar b;
    b.label = windows_vary ? c.value + "/" + c.window : c.value;
    b.value = throttle ? c.outcome.suppressed : c.outcome.alerts;
    b.current = c.current;
    b.title = fmt::format("{} per {}: {} {}{}", c.value, c.window, b.value, throttle ? "suppressed" : "alerts",
                          c.current ? " (current)" : "");
    bars.push_back(std::move(b));
  }
  out += fmt::format("<h3>Sweep: {} per candidate</h3>\n", throttle ? "lines suppressed" : "alerts");
  out += bar_chart_svg(bars, throttle ? "suppressed" : "alerts");
  out += "<p class=\"legend muted\">";
  out += "the rule as written in orange, the other candidates in grey-blue</p>\n";
  out += "<table class=\"sweep\">\n<tr><th>";
  out += rule.threshold ? "threshold" : "value";
  out += "</th><th>window</th>";
  if (throttle) out += "<th>passed</th><th>suppressed</th><th>summaries</th>";
  else out += "<th>alerts</th><th>resolved</th><th>held back</th><th>events</th>";
  out += "<th></th></tr>\n";
  for (const Candidate& c : rule.sweep) {
    out += c.current ? "<tr class=\"current\"><td>" : "<tr><td>";
    esc(out, c.value);
    out += "</td><td class=\"text\">";
    esc(out, c.window);
    out += "</td>";
    const Outcome& o = c.outcome;
    if (throttle) out += fmt::format("<td>{}</td><td>{}</td><td>{}</td>", o.passed, o.suppressed, o.summaries);
    else
      out += fmt::format("<td>{}</td><td>{}</td><td>{}</td><td>{}</td>", o.alerts, o.resolved, o.suppressed, o.events);
    out += c.current ? "<td class=\"text\">current</td></tr>\n" : "<td></td></tr>\n";
  }
  out += "</table>\n";
  if (!rule.suggestion.empty()) {
    out += "<p class=\"suggestion\"><b>Suggestion:</b> ";
    esc(out, rule.suggestion);
    out += "</p>\n";
  }
}

void top_keys(std::string& out, const RuleResult& rule) {
  if (!rule.keyed) return;
  const bool throttle = rule.kind == config::RuleKind::Throttle;
  out += fmt::format("<h3>Top keys ({} of {})</h3>\n", rule.top_keys.size(), rule.keys);
  if (rule.top_keys.empty()) {
    out += "<p class=\"muted\">no key was counted</p>\n";
    return;
  }
  out += fmt::format(
      "<table class=\"top-keys\">\n<tr><th>key</th><th>peak</th><th>first at (UTC)</th><th>{}</th><th>{}</th></tr>\n",
      throttle ? "lines" : "events", throttle ? "summaries" : "alerts");
  for (const KeyPeak& k : rule.top_keys) {
    out += "<tr><td><code>";
    esc(out, k.key);
    out += fmt::format("</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", k.peak, utc(k.peak_t_ms),
                       k.events, k.alerts);
  }
  out += "</table>\n";
}

void rule_section(std::string& out, const RuleResult& rule, std::size_t index) {
  out += fmt::format("<section class=\"rule\" id=\"rule-{}\">\n<h2>", index);
  esc(out, rule.name);
  out += fmt::format(" <span class=\"kind\">{}</span></h2>\n<p class=\"condition\"><code>", to_string(rule.kind));
  esc(out, rule.condition);
  out += "</code>; window ";
  esc(out, rule.window);
  out += fmt::format(" in buckets of {}", duration_or_dash(rule.bucket_ms));
  if (rule.keyed) out += fmt::format("; keyed, {} keys", rule.keys);
  out += "</p>\n<div class=\"cols\">\n";
  outcome_table(out, rule);
  distribution_table(out, rule.distribution);
  out += "</div>\n";
  timeline(out, rule);
  sweep(out, rule);
  top_keys(out, rule);
  out += "</section>\n";
}

void change_item(std::string& out, const DiffChange& c) {
  std::string key;
  if (!c.key.empty()) key = " key <code>" + html_escaped(c.key) + "</code>";
  switch (c.kind) {
    case DiffChange::Kind::Added:
      out += fmt::format("<li class=\"change added\">+ added{} at {}</li>\n", key, utc(c.new_ms));
      break;
    case DiffChange::Kind::Removed:
      out += fmt::format("<li class=\"change removed\">- removed{} at {}</li>\n", key, utc(c.old_ms));
      break;
    case DiffChange::Kind::Moved: {
      const int64_t d = c.new_ms - c.old_ms;
      const std::string by = d == 0 ? "0s" : (d > 0 ? "+" : "-") + config::format_duration(d > 0 ? d : -d);
      out += fmt::format("<li class=\"change moved\">~ moved{} from {} to {} ({})</li>\n", key, utc(c.old_ms),
                         utc(c.new_ms), by);
      break;
    }
  }
}

void diff_section(std::string& out, const Report& r) {
  out += "<section class=\"diff\" id=\"diff\">\n<h2>Rule diff against <code>";
  esc(out, r.against);
  out += "</code></h2>\n";
  out +=
      "<table class=\"diff-counts\">\n<tr><th>rule</th><th>status</th><th>old alerts</th><th>new alerts</th>"
      "<th>unchanged</th><th>moved</th><th>added</th><th>removed</th></tr>\n";
  for (const RuleDiff& d : r.diff) {
    out += "<tr><td>";
    esc(out, d.rule);
    out += "</td><td class=\"text\">";
    esc(out, d.status);
    out += fmt::format("</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", d.old_alerts,
                       d.new_alerts, d.unchanged, d.moved, d.added, d.removed);
  }
  out += "</table>\n";
  for (const RuleDiff& d : r.diff) {
    if (d.changes.empty()) continue;
    out += "<h3>";
    esc(out, d.rule);
    out += "</h3>\n<ul class=\"changes\">\n";
    const std::size_t shown = std::min(d.changes.size(), kMaxChangesShown);
    for (std::size_t i = 0; i < shown; ++i) change_item(out, d.changes[i]);
    out += "</ul>\n";
    // The counts are of all changes; the list itself stops at kMaxMarks.
    const uint64_t total = std::max<uint64_t>(d.added + d.removed + d.moved, d.changes.size());
    if (total > shown) out += fmt::format("<p class=\"more\">{} more</p>\n", total - shown);
  }
  out += "</section>\n";
}

}  // namespace

std::string render_html(const Report& result) {
  std::string out;
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>swthrottle backtest";
  if (!result.inputs.empty()) {
    out += ": ";
    esc(out, result.inputs.front());
    if (result.inputs.size() > 1) out += fmt::format(" and {} more", result.inputs.size() - 1);
  }
  out += "</title>\n<style>";
  out += kStyle;
  out += "</style>\n</head>\n<body>\n";
  header(out, result);
  if (result.rules.empty()) out += "<p class=\"muted\">No rule was selected.</p>\n";
  for (std::size_t i = 0; i < result.rules.size(); ++i) rule_section(out, result.rules[i], i);
  if (!result.against.empty()) diff_section(out, result);
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace swthrottle::backtest
