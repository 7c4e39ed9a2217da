#include "backtest/svg_chart.h"

#include <algorithm>

#include <fmt/format.h>

#include "backtest/html_escape.h"
#include "util/json.h"

namespace swthrottle::backtest {

namespace {

// Both charts share one frame: the plot area [kLeft, kWidth - kRight] x
// [kTop, axis], with the count labels left of it and the category or time
// labels under it.
constexpr double kWidth = 900;
constexpr double kLeft = 60;
constexpr double kRight = 20;
constexpr double kTop = 16;
constexpr double kPlotWidth = kWidth - kLeft - kRight;

// Where a count lies on a vertical axis from `axis` (0) up to kTop (top).
double y_of(uint64_t v, uint64_t top, double axis) {
  return axis - (axis - kTop) * static_cast<double>(v) / static_cast<double>(top);
}

void open_svg(std::string& out, double height, std::string_view label) {
  out += fmt::format(
      "<svg width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" role=\"img\" "
      "aria-label=\"",
      kWidth, height);
  append_html_escaped(out, label);
  out += "\">\n";
}

// The count axis: a grid line and a label per step, the label's y the grid
// line's (dominant-baseline middle), so that a reader of the SVG text finds
// the y of every labelled count.
void count_axis(std::string& out, const CountScale& scale, double axis, std::string_view value_name) {
  for (uint64_t v = 0; v <= scale.top; v += scale.step) {
    const double y = y_of(v, scale.top, axis);
    out += fmt::format("<line class=\"grid\" x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"{}\"/>\n", kLeft,
                       y, kWidth - kRight, y, v == 0 ? kInkColor : kGridColor);
    out += fmt::format(
        "<text class=\"ylabel\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" dominant-baseline=\"middle\">{}</text>\n",
        kLeft - 6, y, v);
  }
  out += fmt::format(
      "<text class=\"yname\" x=\"12\" y=\"{:.1f}\" text-anchor=\"middle\" transform=\"rotate(-90 12 {:.1f})\">",
      (kTop + axis) / 2, (kTop + axis) / 2);
  append_html_escaped(out, value_name);
  out += "</text>\n";
}

}  // namespace

CountScale count_scale(uint64_t max) {
  // The smallest step of 1, 2, 5 x 10^k with 4 * step >= max. No count comes
  // near 2^62; the clamp only keeps 4 * step from overflowing.
  max = std::min<uint64_t>(max, 4'000'000'000'000'000'000ULL);
  const uint64_t need = max / 4 + (max % 4 != 0 ? 1 : 0);
  uint64_t power = 1;
  for (;;) {
    for (const uint64_t m : {1, 2, 5}) {
      if (m * power >= need) return CountScale{m * power, 4 * m * power};
    }
    power *= 10;
  }
}

std::string time_label(int64_t t_ms, int64_t span_ms) {
  std::string iso;  // "2026-11-21T10:00:05.000Z"
  append_rfc3339_ms(iso, t_ms);
  const std::size_t t = iso.find('T');
  if (t == std::string::npos || t < 5 || iso.size() < t + 9) return iso;
  const std::string clock = iso.substr(t + 1, 8);  // HH:MM:SS
  if (span_ms < 10 * 60'000) return clock;
  if (span_ms <= 2 * 86'400'000LL) return clock.substr(0, 5);
  return iso.substr(t - 5, 5) + " " + clock.substr(0, 5);
}

std::string timeline_svg(const TimelineChart& chart) {
  constexpr double kHeight = 250;
  constexpr double kAxis = kHeight - 56;  // the count 0
  const std::size_t n = chart.max.size();
  const int64_t step = std::max<int64_t>(chart.step_ms, 1);
  const int64_t t0 = chart.start_ms;
  const int64_t span = step * static_cast<int64_t>(std::max<std::size_t>(n, 1));
  const auto x_of = [&](int64_t t) {
    const double f = static_cast<double>(t - t0) / static_cast<double>(span);
    return kLeft + kPlotWidth * std::clamp(f, 0.0, 1.0);
  };

  uint64_t peak = 0;
  for (const uint64_t v : chart.max) peak = std::max(peak, v);
  // The threshold is always on the chart, also when no window came near it:
  // how far away it is, is the point.
  const CountScale scale = count_scale(std::max(peak, chart.threshold.value_or(0)));

  std::string out;
  open_svg(out, kHeight, "window count over time");
  count_axis(out, scale, kAxis, "window count");

  if (n == 0) {
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{}\">no event was counted</text>\n",
                       kLeft + kPlotWidth / 2, (kTop + kAxis) / 2, kInkColor);
  } else {
    // A step area: each point is flat over its step, the way a window count
    // holds between buckets (a line between points would invent counts).
    out += fmt::format("<path class=\"series\" fill=\"{}\" stroke=\"{}\" stroke-width=\"1\" d=\"M{:.1f},{:.1f}",
                       kSeriesColor, kSeriesColor, kLeft, kAxis);
    for (std::size_t i = 0; i < n; ++i) {
      const double y = y_of(chart.max[i], scale.top, kAxis);
      out += fmt::format("V{:.1f}H{:.1f}", y, x_of(t0 + step * static_cast<int64_t>(i + 1)));
    }
    out += fmt::format("V{:.1f}Z\"/>\n", kAxis);
  }

  if (chart.threshold) {
    const double y = y_of(*chart.threshold, scale.top, kAxis);
    out += fmt::format(
        "<line class=\"threshold\" x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"2\" "
        "stroke-dasharray=\"8 5\"/>\n",
        kLeft, y, kWidth - kRight, y, kAlertColor);
    out += fmt::format(
        "<text class=\"threshold-label\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" fill=\"{}\">Y = {}</text>\n",
        kWidth - kRight - 4, y - 5, kAlertColor, *chart.threshold);
  }

  // Alert marks: a triangle pointing up at its time, just under the axis, so
  // that a mark never hides the count it fired on.
  for (const TimeMark& m : chart.marks) {
    const double x = x_of(m.t_ms);
    out += fmt::format(
        "<polygon class=\"alert-mark\" points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\" fill=\"{}\"><title>", x,
        kAxis + 2, x - 5, kAxis + 12, x + 5, kAxis + 12, kAlertColor);
    append_html_escaped(out, m.title);
    out += "</title></polygon>\n";
  }

  // Five time labels, evenly spaced over the span (ticks at round times
  // would read better, but the span is already the log's own).
  for (int i = 0; i <= 4; ++i) {
    const int64_t t = t0 + span / 4 * i;
    const char* anchor = i == 0 ? "start" : i == 4 ? "end" : "middle";
    out += fmt::format("<text class=\"xlabel\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"{}\">{}</text>\n", x_of(t),
                       kAxis + 28, anchor, time_label(t, span));
  }
  std::string first_day;
  append_rfc3339_ms(first_day, t0);
  out += fmt::format("<text class=\"xname\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">time (UTC, from {})</text>\n",
                     kLeft + kPlotWidth / 2, kAxis + 46, first_day.substr(0, first_day.find('T')));
  out += "</svg>\n";
  return out;
}

std::string bar_chart_svg(std::span<const Bar> bars, std::string_view value_name) {
  constexpr double kHeight = 220;
  constexpr double kAxis = kHeight - 46;
  // A zero is drawn this high, so that every candidate, the current one in
  // its colour, can be seen and pointed at.
  constexpr double kMinBar = 2;

  uint64_t peak = 0;
  for (const Bar& b : bars) peak = std::max(peak, b.value);
  const CountScale scale = count_scale(peak);

  std::string out;
  open_svg(out, kHeight, value_name);
  count_axis(out, scale, kAxis, value_name);
  if (bars.empty()) {
    out += "</svg>\n";
    return out;
  }

  const double slot = kPlotWidth / static_cast<double>(bars.size());
  const double width = std::min(slot * 0.7, 60.0);
  // With many candidates, every k-th label only, so labels never overlap
  // (about 48 px for each); the current one always, in place of those it
  // would overlap.
  const std::size_t label_every = std::max<std::size_t>(1, static_cast<std::size_t>(48 / slot) + 1);
  std::size_t current = bars.size();
  for (std::size_t i = 0; i < bars.size(); ++i) {
    if (bars[i].current) current = i;
  }
  const auto labelled = [&](std::size_t i) {
    if (i == current) return true;
    const bool near_current = current < bars.size() && (i > current ? i - current : current - i) < label_every;
    return i % label_every == 0 && !near_current;
  };
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    const double cx = kLeft + slot * (static_cast<double>(i) + 0.5);
    const double y = std::min(y_of(b.value, scale.top, kAxis), kAxis - kMinBar);
    out += fmt::format("<rect class=\"{}\" data-label=\"", b.current ? "bar current" : "bar");
    append_html_escaped(out, b.label);
    out += fmt::format("\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"><title>",
                       cx - width / 2, y, width, kAxis - y, b.current ? kCurrentColor : kCandidateColor);
    append_html_escaped(out, b.title);
    out += "</title></rect>\n";
    if (slot >= 24) {
      out += fmt::format("<text class=\"value\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", cx,
                         y - 4, b.value);
    }
    if (labelled(i)) {
      out += fmt::format("<text class=\"xlabel{}\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">",
                         b.current ? " current" : "", cx, kAxis + 18);
      append_html_escaped(out, b.label);
      out += "</text>\n";
    }
  }
  out += "</svg>\n";
  return out;
}

}  // namespace swthrottle::backtest
