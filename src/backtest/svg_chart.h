// The SVG charts of the HTML report (backtest/report_html.h): pure functions
// from numbers to SVG text, nothing read from a Report, so that each chart
// can be tested on its own numbers.
//
// The colours are fixed and part of the contract: the screenshot test
// (tests/e2e/backtest_html_test.cpp) looks for them in the rendered page,
// and the report's legends name them. Nothing else on the page is drawn in
// them, so a red pixel always means a threshold or an alert.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace swthrottle::backtest {

inline constexpr std::string_view kSeriesColor = "#3b6fd8";     // blue: the window count over time
inline constexpr std::string_view kAlertColor = "#d62728";      // red: the threshold line, the alert marks
inline constexpr std::string_view kCurrentColor = "#ff7f0e";    // orange: the rule's own candidate of a sweep
inline constexpr std::string_view kCandidateColor = "#8c9cb8";  // grey-blue: the other candidates
inline constexpr std::string_view kInkColor = "#333333";        // axes and labels
inline constexpr std::string_view kGridColor = "#e4e4e4";       // grid lines

// The count axis of a chart: 0 to top in four steps of `step`, where step is
// 1, 2 or 5 times a power of ten: the smallest such that top >= max (and
// step >= 1, so an all-zero chart still has an axis).
struct CountScale {
  uint64_t step = 1;
  uint64_t top = 4;
};
CountScale count_scale(uint64_t max);

// A mark on the timeline: an alert at t_ms, with a tooltip (plain text, the
// chart escapes it).
struct TimeMark {
  int64_t t_ms = 0;
  std::string title;
};

// The timeline: max[i] is the count over [start + i*step, start + (i+1)*step),
// drawn as a filled step area in kSeriesColor; the threshold (when set) as a
// dashed kAlertColor line labelled "Y = n"; each mark as a kAlertColor
// triangle (class "alert-mark") under the time axis. Time labels are UTC.
struct TimelineChart {
  int64_t start_ms = 0;
  int64_t step_ms = 0;
  std::span<const uint64_t> max;
  std::optional<uint64_t> threshold;
  std::span<const TimeMark> marks;
};
std::string timeline_svg(const TimelineChart& chart);

// One bar of a bar chart: `label` under it, `value` over it, a tooltip;
// the current bar in kCurrentColor (class "bar current"), the others in
// kCandidateColor (class "bar").
struct Bar {
  std::string label;
  uint64_t value = 0;
  bool current = false;
  std::string title;
};
// `value_name` names the count axis ("alerts", "suppressed").
std::string bar_chart_svg(std::span<const Bar> bars, std::string_view value_name);

// A time as the axis labels write it, UTC: "HH:MM:SS" when the chart spans
// less than 10 minutes, "HH:MM" up to 2 days, else "MM-DD HH:MM".
std::string time_label(int64_t t_ms, int64_t span_ms);

}  // namespace swthrottle::backtest
