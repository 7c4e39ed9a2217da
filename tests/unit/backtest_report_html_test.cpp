// The HTML report (backtest/report_html.h) and its charts
// (backtest/svg_chart.h), read as text: a complete, self-contained document;
// user text escaped everywhere; one mark per alert; the threshold line where
// the count axis puts it; the current candidate in its colour; the diff's
// list capped. What the page looks like is tests/e2e/backtest_html_test.cpp.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "backtest/html_escape.h"
#include "backtest/report.h"
#include "backtest/report_html.h"
#include "backtest/svg_chart.h"
#include "support/backtest_fixtures.h"

using swthrottle::backtest::AlertMark;
using swthrottle::backtest::Bar;
using swthrottle::backtest::count_scale;
using swthrottle::backtest::DiffChange;
using swthrottle::backtest::html_escaped;
using swthrottle::backtest::render_html;
using swthrottle::backtest::Report;
using swthrottle::backtest::RuleDiff;
using swthrottle::backtest::TimelineChart;
using swthrottle::backtest::TimeMark;
using swthrottle::test::kT0;
using swthrottle::test::sample_backtest;

namespace {

std::size_t count(std::string_view text, std::string_view needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string_view::npos; at = text.find(needle, at + needle.size()))
    ++n;
  return n;
}

// Every start tag that begins with `prefix` ("<line class=\"threshold\""), up to its '>'.
std::vector<std::string> tags(std::string_view text, std::string_view prefix) {
  std::vector<std::string> out;
  for (std::size_t at = text.find(prefix); at != std::string_view::npos; at = text.find(prefix, at + 1)) {
    out.emplace_back(text.substr(at, text.find('>', at) - at + 1));
  }
  return out;
}

std::string attr(std::string_view tag, std::string_view name) {
  const std::string key = " " + std::string(name) + "=\"";
  const std::size_t at = tag.find(key);
  REQUIRE_MESSAGE(at != std::string_view::npos, "no " << name << " in " << tag);
  const std::size_t from = at + key.size();
  return std::string(tag.substr(from, tag.find('"', from) - from));
}

double num_attr(std::string_view tag, std::string_view name) { return std::strtod(attr(tag, name).c_str(), nullptr); }

// The y of the count label `value` of a chart ("<text class=\"ylabel\" ... y=\"Y\" ...>value</text>").
double label_y(std::string_view svg, uint64_t value) {
  const std::string text = ">" + std::to_string(value) + "</text>";
  for (const std::string& t : tags(svg, "<text class=\"ylabel\"")) {
    const std::size_t at = svg.find(t);
    if (svg.substr(at + t.size() - 1, text.size()) == text) return num_attr(t, "y");
  }
  FAIL("no count label " << value);
  return 0;
}

// The highest count label of a chart: the top of its axis.
uint64_t top_label(std::string_view svg) {
  uint64_t top = 0;
  for (const std::string& t : tags(svg, "<text class=\"ylabel\"")) {
    const std::size_t at = svg.find(t) + t.size();
    top = std::max<uint64_t>(top, std::strtoull(std::string(svg.substr(at, 24)).c_str(), nullptr, 10));
  }
  return top;
}

void check_self_contained(const std::string& html) {
  CHECK(html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
  CHECK(html.ends_with("</html>\n"));
  CHECK(count(html, "<html") == 1);
  CHECK(count(html, "</html>") == 1);
  CHECK(count(html, "<head>") == 1);
  CHECK(count(html, "<body>") == 1);
  CHECK(count(html, "</body>") == 1);
  CHECK(count(html, "<meta charset=\"utf-8\">") == 1);
  for (const std::string_view bad : {"http://", "https://", "src=", "<script", "@import", "url(", "//cdn", "<link"}) {
    CHECK_MESSAGE(html.find(bad) == std::string::npos, "found " << bad);
  }
  // An open tag for every close tag of the elements the page is made of.
  for (const std::string_view el : {"svg", "table", "section", "p", "ul", "h2", "h3", "code"}) {
    CHECK_MESSAGE(count(html, "<" + std::string(el) + ">") + count(html, "<" + std::string(el) + " ") ==
                      count(html, "</" + std::string(el) + ">"),
                  el);
  }
}

Report with_diff(Report r, std::size_t changes, uint64_t added) {
  r.against = "old/rules.toml";
  RuleDiff d;
  d.rule = "api-errors";
  d.status = "changed";
  d.old_alerts = 2;
  d.new_alerts = 3;
  d.added = added;
  for (std::size_t i = 0; i < changes; ++i) {
    d.changes.push_back(
        DiffChange{DiffChange::Kind::Added, "k" + std::to_string(i), 0, kT0 + static_cast<int64_t>(i) * 1000});
  }
  r.diff.push_back(d);
  RuleDiff same;
  same.rule = "disk-full";
  same.status = "unchanged";
  same.old_alerts = same.new_alerts = same.unchanged = 1;
  r.diff.push_back(same);
  return r;
}

}  // namespace

TEST_CASE("html report: a complete document with nothing fetched") {
  check_self_contained(render_html(sample_backtest(true)));
  check_self_contained(render_html(sample_backtest(false)));
  check_self_contained(render_html(with_diff(sample_backtest(true), 120, 120)));
  check_self_contained(render_html(Report{}));  // nothing at all
}

TEST_CASE("html report: the header says what was read") {
  const std::string html = render_html(sample_backtest());
  CHECK(html.find("<code>/var/log/app/api.log</code>, <code>/var/log/app/api.log.1</code>") != std::string::npos);
  CHECK(html.find("120000 (5400 matched by a rule)") != std::string::npos);
  CHECK(html.find("2026-11-21T10:00:05.000Z to 2026-11-21T16:00:04.999Z (UTC)") != std::string::npos);
  CHECK(html.find("none seen") == std::string::npos);
  CHECK(render_html(Report{}).find("none seen") != std::string::npos);
}

TEST_CASE("html report: the rule's figures, distribution, sweep table and top keys") {
  const std::string html = render_html(sample_backtest());
  CHECK(html.find("<h2>api-errors <span class=\"kind\">alert</span></h2>") != std::string::npos);
  CHECK(html.find("<code>threshold = 20 per 5m</code>") != std::string::npos);
  CHECK(html.find("<tr><th>alerts</th><td>3</td></tr>") != std::string::npos);
  CHECK(html.find("<tr><th>held back</th><td>40</td></tr>") != std::string::npos);
  CHECK(html.find("<tr><th>p99</th><td>30</td></tr>") != std::string::npos);
  CHECK(html.find("<tr><th>samples</th><td>5000</td></tr>") != std::string::npos);
  CHECK(count(html, "<tr class=\"current\">") == 1);
  CHECK(html.find("<tr class=\"current\"><td>20</td>") != std::string::npos);
  CHECK(html.find("<b>Suggestion:</b> threshold 25 per 5m would keep all 3 alerts") != std::string::npos);
  CHECK(html.find("<h3>Top keys (3 of 42)</h3>") != std::string::npos);
  CHECK(html.find("<code>198.51.100.7</code>") != std::string::npos);

  // A throttle shows its own figures, and its sweep charts suppressed lines.
  Report t = sample_backtest();
  t.rules[0].kind = swthrottle::config::RuleKind::Throttle;
  t.rules[0].outcome.passed = 77;
  t.rules[0].sweep[1].outcome.suppressed = 1234;
  const std::string th = render_html(t);
  CHECK(th.find("<tr><th>passed</th><td>77</td></tr>") != std::string::npos);
  CHECK(th.find("<tr><th>held back</th>") == std::string::npos);
  CHECK(th.find("<h3>Sweep: lines suppressed per candidate</h3>") != std::string::npos);
  CHECK(th.find(">1234</text>") != std::string::npos);

  // An unkeyed rule has no top keys; a rule that could not be swept says why.
  Report u = sample_backtest();
  u.rules[0].keyed = false;
  u.rules[0].sweep.clear();
  u.rules[0].not_swept = "its `when` ends in no number";
  const std::string uh = render_html(u);
  CHECK(uh.find("Top keys") == std::string::npos);
  CHECK(uh.find("<p class=\"not-swept\">Not swept: its `when` ends in no number</p>") != std::string::npos);
  CHECK(uh.find("class=\"bar") == std::string::npos);
}

TEST_CASE("html report: user text is escaped, in HTML and in SVG") {
  Report r = with_diff(sample_backtest(), 2, 2);
  auto& rule = r.rules[0];
  const std::string evil = "<script>alert(1)</script> & \"co\" 'x'";
  const std::string escaped = "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;co&quot; &#39;x&#39;";
  r.inputs = {evil};
  r.rule_files = {evil};
  r.against = evil;
  rule.name = evil;
  rule.condition = evil;
  rule.window = evil;
  rule.suggestion = evil;
  rule.alerts[0].key = evil;  // the mark's tooltip, inside the SVG
  rule.top_keys[0].key = evil;
  rule.sweep[0].value = evil;  // the bar's label and data-label, inside the SVG
  rule.sweep[0].window = evil;
  r.diff[0].rule = evil;
  r.diff[0].status = evil;
  r.diff[0].changes[0].key = evil;

  const std::string html = render_html(r);
  check_self_contained(html);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("alert(1)</script>") == std::string::npos);
  CHECK(html.find("\"co\"") == std::string::npos);
  CHECK(html.find("'x'") == std::string::npos);
  CHECK(html.find("& ") == std::string::npos);  // every & of the page starts an entity
  // Every place: inputs, rule files, against, title, name, condition, window
  // twice (text and bar label), suggestion, mark, key, bar value and label,
  // the sweep table's value and window, diff rule (table and heading),
  // status, change key; at least 15.
  CHECK(count(html, escaped) >= 15);
  CHECK(html.find("<title>2026-11-21T11:00:25.000Z key " + escaped + ", count 20</title>") != std::string::npos);
  // The window differs from the others' now: the label names both.
  CHECK(html.find("data-label=\"" + escaped + "/" + escaped + "\"") != std::string::npos);
}

TEST_CASE("html_escaped: entities, repaired UTF-8, no forbidden controls") {
  struct Case {
    std::string_view in;
    std::string_view out;
  };
  const Case cases[] = {
      {"plain", "plain"},
      {"a&b<c>d\"e'f", "a&amp;b&lt;c&gt;d&quot;e&#39;f"},
      {"&amp;", "&amp;amp;"},
      {"tab\tnl\ncr\r", "tab\tnl\ncr\r"},
      {std::string_view("nul\0x", 5), "nul\xEF\xBF\xBDx"},
      {"esc\x1b[31m", "esc\xEF\xBF\xBD[31m"},
      {"del\x7f", "del\xEF\xBF\xBD"},
      {"c1\xC2\x85", "c1\xEF\xBF\xBD"},
      {"\xC2\xA0nbsp", "\xC2\xA0nbsp"},
      {"caf\xC3\xA9 \xE6\x97\xA5", "caf\xC3\xA9 \xE6\x97\xA5"},
      {"bad\xFF"
       "byte",
       "bad\xEF\xBF\xBD"
       "byte"},
      {"cut\xE6\x97", "cut\xEF\xBF\xBD"},
  };
  for (const Case& c : cases) CHECK_MESSAGE(html_escaped(c.in) == c.out, c.in);
}

TEST_CASE("html timeline: one alert mark per alert") {
  for (const std::size_t n : {0, 1, 7, 250}) {
    Report r = sample_backtest();
    auto& rule = r.rules[0];
    rule.alerts.clear();
    for (std::size_t i = 0; i < n; ++i) {
      rule.alerts.push_back(AlertMark{kT0 + static_cast<int64_t>(i) * 60'000, "", 21});
    }
    rule.outcome.alerts = n;
    const std::string html = render_html(r);
    CHECK_MESSAGE(count(html, "<polygon class=\"alert-mark\"") == n, n);
    for (const std::string& t : tags(html, "<polygon class=\"alert-mark\"")) CHECK(attr(t, "fill") == "#d62728");
    // The legend names the marks only when there are some.
    CHECK((html.find("alert (triangle)") != std::string::npos) == (n > 0));
  }
  // Marks lie along the time axis in time order, the first at its left end.
  const std::string html = render_html(sample_backtest());
  const auto marks = tags(html, "<polygon class=\"alert-mark\"");
  REQUIRE(marks.size() == 3);
  const auto tip_x = [](const std::string& tag) { return std::strtod(attr(tag, "points").c_str(), nullptr); };
  CHECK(tip_x(marks[0]) < tip_x(marks[1]));
  CHECK(tip_x(marks[1]) < tip_x(marks[2]));
  // Spike 1 starts at minute 60 of 360: a sixth of the plot (60..880).
  CHECK(tip_x(marks[0]) == doctest::Approx(60 + 820.0 * (60 * 60'000 + 20'000) / (360 * 60'000)).epsilon(0.001));

  // More alerts than marks: the page says so.
  Report many = sample_backtest();
  many.rules[0].outcome.alerts = 12'345;
  CHECK(render_html(many).find("The first 3 of 12345 alerts are marked.") != std::string::npos);
}

TEST_CASE("html timeline: the threshold line, exactly when there is a threshold, where the axis puts it") {
  struct Case {
    uint64_t peak;
    uint64_t threshold;
    uint64_t top;  // the axis count_scale() gives
  };
  // Threshold under, at and over the highest count: the axis always holds both.
  const Case cases[] = {{37, 20, 40}, {30, 30, 40}, {10, 50, 80}, {0, 1, 4}, {1000, 999, 2000}};
  for (const Case& c : cases) {
    const std::vector<uint64_t> max = {c.peak / 2, c.peak, 0, c.peak / 3};
    TimelineChart chart;
    chart.start_ms = kT0;
    chart.step_ms = 60'000;
    chart.max = max;
    chart.threshold = c.threshold;
    const std::string svg = swthrottle::backtest::timeline_svg(chart);
    CAPTURE(c.threshold);
    const auto lines = tags(svg, "<line class=\"threshold\"");
    REQUIRE(lines.size() == 1);
    CHECK(attr(lines[0], "stroke") == "#d62728");
    CHECK(attr(lines[0], "stroke-dasharray") != "");
    CHECK(num_attr(lines[0], "y1") == num_attr(lines[0], "y2"));
    CHECK(svg.find(">Y = " + std::to_string(c.threshold) + "</text>") != std::string::npos);

    const uint64_t top = top_label(svg);
    CHECK(top == c.top);
    const double y0 = label_y(svg, 0);
    const double ytop = label_y(svg, top);
    REQUIRE(ytop < y0);  // SVG's y grows downwards
    const double expected = y0 + (ytop - y0) * static_cast<double>(c.threshold) / static_cast<double>(top);
    CHECK(num_attr(lines[0], "y1") == doctest::Approx(expected).epsilon(0.002));
    CHECK(num_attr(lines[0], "y1") <= y0);
    CHECK(num_attr(lines[0], "y1") >= ytop);

    chart.threshold.reset();
    const std::string none = swthrottle::backtest::timeline_svg(chart);
    CHECK(none.find("class=\"threshold") == std::string::npos);
    CHECK(none.find("Y = ") == std::string::npos);
    CHECK(none.find("#d62728") == std::string::npos);  // no mark either: nothing red at all
  }
  // Through the report: a `when` rule has none.
  CHECK(count(render_html(sample_backtest(true)), "<line class=\"threshold\"") == 1);
  CHECK(count(render_html(sample_backtest(false)), "<line class=\"threshold\"") == 0);
  CHECK(render_html(sample_backtest(false)).find("#d62728") == std::string::npos);
}

TEST_CASE("html timeline: the series as a blue step area, UTC time labels") {
  const std::vector<uint64_t> max = {0, 4, 8};
  TimelineChart chart;
  chart.start_ms = kT0;
  chart.step_ms = 60'000;
  chart.max = max;
  const std::string svg = swthrottle::backtest::timeline_svg(chart);
  const auto paths = tags(svg, "<path class=\"series\"");
  REQUIRE(paths.size() == 1);
  CHECK(attr(paths[0], "fill") == "#3b6fd8");
  // Axis 0 to 8 (step 2) from y 194 up to 16: counts 0, 4, 8 over thirds of 60..880.
  CHECK(attr(paths[0], "d") == "M60.0,194.0V194.0H333.3V105.0H606.7V16.0H880.0V194.0Z");
  CHECK(svg.find(">10:00:05</text>") != std::string::npos);  // 3 minutes: seconds shown
  CHECK(svg.find("time (UTC, from 2026-11-21)") != std::string::npos);

  const std::string empty = swthrottle::backtest::timeline_svg(TimelineChart{});
  CHECK(empty.find("no event was counted") != std::string::npos);
  CHECK(empty.find("class=\"series\"") == std::string::npos);
}

TEST_CASE("html time_label: the axis' precision follows the span") {
  CHECK(swthrottle::backtest::time_label(kT0, 60'000) == "10:00:05");
  CHECK(swthrottle::backtest::time_label(kT0, 6 * 3'600'000) == "10:00");
  CHECK(swthrottle::backtest::time_label(kT0, 2 * 86'400'000) == "10:00");
  CHECK(swthrottle::backtest::time_label(kT0, 3 * 86'400'000) == "11-21 10:00");
}

TEST_CASE("html count_scale: 0 to 4 steps of 1, 2, 5 x 10^k") {
  struct Case {
    uint64_t max, step, top;
  };
  const Case cases[] = {{0, 1, 4},
                        {1, 1, 4},
                        {4, 1, 4},
                        {5, 2, 8},
                        {8, 2, 8},
                        {9, 5, 20},
                        {20, 5, 20},
                        {21, 10, 40},
                        {37, 10, 40},
                        {41, 20, 80},
                        {999, 500, 2000},
                        {1'000'000, 500'000, 2'000'000},
                        {UINT64_MAX, 1'000'000'000'000'000'000ULL, 4'000'000'000'000'000'000ULL}};
  for (const Case& c : cases) {
    CAPTURE(c.max);
    CHECK(count_scale(c.max).step == c.step);
    CHECK(count_scale(c.max).top == c.top);
  }
}

TEST_CASE("html sweep: the current candidate's bar in orange, the others grey-blue") {
  for (std::size_t current = 0; current < 5; ++current) {
    Report r = sample_backtest();
    for (std::size_t i = 0; i < r.rules[0].sweep.size(); ++i) r.rules[0].sweep[i].current = i == current;
    const std::string html = render_html(r);
    CAPTURE(current);
    const auto bars = tags(html, "<rect class=\"bar");
    REQUIRE(bars.size() == 5);
    for (std::size_t i = 0; i < bars.size(); ++i) {
      CHECK(attr(bars[i], "class") == (i == current ? "bar current" : "bar"));
      CHECK(attr(bars[i], "fill") == (i == current ? "#ff7f0e" : "#8c9cb8"));
      CHECK(attr(bars[i], "data-label") == r.rules[0].sweep[i].value);
    }
    CHECK(count(html, "#ff7f0e") == 1);  // orange is that bar's alone
  }
  // Bar heights follow the values; a zero still shows (2 px).
  const Bar bars[] = {{"a", 10, false, ""}, {"b", 5, true, ""}, {"c", 0, false, ""}};
  const std::string svg = swthrottle::backtest::bar_chart_svg(bars, "alerts");
  const auto rects = tags(svg, "<rect class=\"bar");
  REQUIRE(rects.size() == 3);
  CHECK(num_attr(rects[0], "height") == doctest::Approx(2 * num_attr(rects[1], "height")));
  CHECK(num_attr(rects[2], "height") == doctest::Approx(2));
  // Many bars: every third labelled (20.5 px each), and the current one in
  // place of the labels it would overlap.
  std::vector<Bar> many;
  for (int i = 0; i < 40; ++i) many.push_back(Bar{"c" + std::to_string(i), 1, i == 13, ""});
  const std::string crowded = swthrottle::backtest::bar_chart_svg(many, "alerts");
  CHECK(count(crowded, "<text class=\"xlabel") == 13);
  CHECK(crowded.find(">c13</text>") != std::string::npos);
  CHECK(crowded.find(">c12</text>") == std::string::npos);
  CHECK(crowded.find(">c15</text>") == std::string::npos);
  CHECK(crowded.find(">c9</text>") != std::string::npos);
  CHECK(crowded.find(">c18</text>") != std::string::npos);
  CHECK(crowded.find(">c10</text>") == std::string::npos);
  // With --sweep-window the labels name the window too.
  Report w = sample_backtest();
  w.rules[0].sweep[4].window = "10m";
  CHECK(render_html(w).find("data-label=\"30/10m\"") != std::string::npos);
}

TEST_CASE("html diff: per rule counts, the changes, and \"N more\" over the cap") {
  const std::string small = render_html(with_diff(sample_backtest(), 3, 3));
  CHECK(small.find("<h2>Rule diff against <code>old/rules.toml</code></h2>") != std::string::npos);
  CHECK(small.find("<tr><td>api-errors</td><td class=\"text\">changed</td><td>2</td><td>3</td>") != std::string::npos);
  CHECK(small.find("<tr><td>disk-full</td><td class=\"text\">unchanged</td><td>1</td><td>1</td><td>1</td>") !=
        std::string::npos);
  CHECK(count(small, "<li class=\"change") == 3);
  CHECK(small.find("+ added key <code>k2</code> at 2026-11-21T10:00:07.000Z") != std::string::npos);
  CHECK(small.find(" more</p>") == std::string::npos);

  // Over the cap of 100: the first 100 listed, the rest counted.
  const std::string big = render_html(with_diff(sample_backtest(), 150, 150));
  CHECK(count(big, "<li class=\"change") == 100);
  CHECK(big.find("<code>k99</code>") != std::string::npos);
  CHECK(big.find("<code>k100</code>") == std::string::npos);
  CHECK(big.find("<p class=\"more\">50 more</p>") != std::string::npos);
  // More changes than the result kept (kMaxMarks): counted from the totals.
  CHECK(render_html(with_diff(sample_backtest(), 150, 20'000)).find("<p class=\"more\">19900 more</p>") !=
        std::string::npos);

  // Removed and moved, and an unkeyed rule's change has no key.
  Report r = with_diff(sample_backtest(), 0, 0);
  r.diff[0].changes = {{DiffChange::Kind::Removed, "", kT0, 0}, {DiffChange::Kind::Moved, "h", kT0, kT0 + 90'000}};
  r.diff[0].removed = r.diff[0].moved = 1;
  const std::string rm = render_html(r);
  CHECK(rm.find("- removed at 2026-11-21T10:00:05.000Z") != std::string::npos);
  CHECK(rm.find("~ moved key <code>h</code> from 2026-11-21T10:00:05.000Z to 2026-11-21T10:01:35.000Z (+1m30s)") !=
        std::string::npos);

  // No --against: no diff section.
  CHECK(render_html(sample_backtest()).find("id=\"diff\"") == std::string::npos);
}
