#include "backtest/terminal_chart.h"

#include <algorithm>
#include <cmath>

#include "backtest/terminal_text.h"

namespace swthrottle::backtest {
namespace {

// kRising[n]: a cell filled n eighths from the bottom (n = 1..8).
constexpr std::string_view kRising[] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
// kGrowing[n]: a cell filled n eighths from the left.
constexpr std::string_view kGrowing[] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉", "█"};
constexpr std::string_view kThresholdCell = "┄";
constexpr std::string_view kMark = "▲";

// value/max of `eighths_full` eighths, rounded; at least 1 for a value above
// 0, at most eighths_full. In double: the counts are up to 2^64 and the
// result only needs to be right to an eighth of a cell.
int64_t eighths(uint64_t value, uint64_t max, int64_t eighths_full) {
  if (value == 0 || max == 0) return 0;
  const auto e = static_cast<int64_t>(
      std::llround(static_cast<double>(value) / static_cast<double>(max) * static_cast<double>(eighths_full)));
  return std::clamp<int64_t>(e, 1, eighths_full);
}

// Appends `cell` to `line`, opening `ink` before a run of such cells and
// closing it after (painted says whether a run is open).
void append_cell(std::string& line, std::string_view cell, bool paint, std::string_view ink, std::string_view reset,
                 bool& painted) {
  if (paint && !painted && !ink.empty()) {
    line += ink;
    painted = true;
  } else if (!paint && painted) {
    line += reset;
    painted = false;
  }
  line += cell;
}

// The label of a tick at `t_ms` on an axis `span_ms` long: as precise as
// the span needs and no more.
std::string tick_label(int64_t t_ms, int64_t span_ms) {
  const std::string full = utc_time(t_ms);  // "2026-11-02 04:13:20"
  if (span_ms < 10 * 60'000) return full.substr(11, 8);
  if (span_ms <= 86'400'000) return full.substr(11, 5);
  if (span_ms <= 180 * int64_t{86'400'000}) return full.substr(5, 11);
  return full.substr(0, 10);
}

}  // namespace

int TimeAxis::column_of(int64_t t_ms) const {
  if (t_ms <= first_ms) return 0;
  if (t_ms >= end_ms) return columns - 1;
  // (t - first) < len, so the product stays within int64 for any span
  // below 2^63 / columns (about 1.4 million years at 200 columns).
  return static_cast<int>((t_ms - first_ms) * columns / (end_ms - first_ms));
}

int64_t TimeAxis::time_at(int column) const { return first_ms + (end_ms - first_ms) * column / columns; }

std::vector<uint64_t> fit_series(const TimeAxis& axis, int64_t start_ms, int64_t step_ms,
                                 const std::vector<uint64_t>& points) {
  std::vector<uint64_t> columns(static_cast<std::size_t>(axis.columns), 0);
  const int64_t len = axis.end_ms - axis.first_ms;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const int64_t begin = start_ms + static_cast<int64_t>(i) * step_ms;
    const int64_t end = begin + step_ms;
    const int lo = axis.column_of(begin);
    // The last column the point overlaps: the one holding the instant just
    // before `end`, counted in exact time (ceil), so that points shorter
    // than a column still reach every column they touch.
    int hi = axis.columns - 1;
    if (end <= axis.first_ms) hi = 0;
    else if (end < axis.end_ms) hi = static_cast<int>(((end - axis.first_ms) * axis.columns + len - 1) / len) - 1;
    hi = std::max(hi, lo);
    for (int c = lo; c <= hi; ++c) {
      auto& column = columns[static_cast<std::size_t>(c)];
      column = std::max(column, points[i]);
    }
  }
  return columns;
}

int level_row(uint64_t level, uint64_t top, int rows) {
  if (top == 0 || level == 0) return 0;
  const double bands = static_cast<double>(level) / static_cast<double>(top) * rows;
  const int row = static_cast<int>(std::ceil(bands)) - 1;
  return std::clamp(row, 0, rows - 1);
}

std::vector<std::string> column_bars(const std::vector<uint64_t>& values, uint64_t top, int rows,
                                     std::optional<uint64_t> threshold, const ChartInk& ink) {
  std::vector<int64_t> heights;  // in eighths of a row
  heights.reserve(values.size());
  for (uint64_t v : values) heights.push_back(eighths(v, top, int64_t{rows} * 8));
  const int threshold_row = threshold ? level_row(*threshold, top, rows) : -1;

  std::vector<std::string> lines;
  for (int row = rows - 1; row >= 0; --row) {
    std::string line;
    bool painted = false;
    for (int64_t h : heights) {
      const int64_t in_row = std::clamp<int64_t>(h - int64_t{row} * 8, 0, 8);
      if (in_row == 0 && row == threshold_row) {
        append_cell(line, kThresholdCell, true, ink.threshold, ink.reset, painted);
      } else {
        append_cell(line, kRising[in_row], false, ink.threshold, ink.reset, painted);
      }
    }
    if (painted) line += ink.reset;
    lines.push_back(std::move(line));
  }
  return lines;
}

std::string mark_row(int columns, const std::vector<int>& marked, const ChartInk& ink) {
  std::vector<bool> has_mark(static_cast<std::size_t>(std::max(columns, 0)), false);
  for (int c : marked) {
    if (c >= 0 && c < columns) has_mark[static_cast<std::size_t>(c)] = true;
  }
  // Trailing blanks are left out: nothing to see there.
  const auto last = std::find(has_mark.rbegin(), has_mark.rend(), true);
  const std::size_t used = static_cast<std::size_t>(has_mark.rend() - last);
  std::string line;
  bool painted = false;
  for (std::size_t c = 0; c < used; ++c) {
    append_cell(line, has_mark[c] ? kMark : " ", has_mark[c], ink.mark, ink.reset, painted);
  }
  if (painted) line += ink.reset;
  return line;
}

std::string horizontal_bar(uint64_t value, uint64_t max, int columns) {
  const int64_t e = eighths(value, max, int64_t{columns} * 8);
  std::string bar;
  for (int64_t i = 0; i < e / 8; ++i) bar += kGrowing[8];
  bar += kGrowing[e % 8];
  return bar;
}

std::vector<std::string> timeline_chart(const TimelineSpec& spec, const ChartInk& ink) {
  uint64_t top = std::max<uint64_t>(spec.threshold.value_or(0), 1);
  for (uint64_t p : spec.points) top = std::max(top, p);

  // The left axis: the top of the scale on the top row, the threshold on
  // its row (when that is another row).
  const int threshold_row = spec.threshold ? spec.rows - 1 - level_row(*spec.threshold, top, spec.rows) : -1;
  const std::string top_label = grouped(top);
  const std::string threshold_label = spec.threshold ? grouped(*spec.threshold) : "";
  const int label_columns = std::max(display_columns(top_label), display_columns(threshold_label));
  const int margin = label_columns + 2;  // "label ┤"
  const int plot = std::max(spec.width - margin, 1);

  const TimeAxis axis{spec.first_ms, std::max(spec.last_ms, spec.first_ms) + 1, plot};
  const std::vector<uint64_t> columns = fit_series(axis, spec.start_ms, spec.step_ms, spec.points);
  const std::vector<std::string> bars = column_bars(columns, top, spec.rows, spec.threshold, ink);

  std::vector<std::string> lines;
  for (int row = 0; row < spec.rows; ++row) {
    std::string label;
    if (row == 0) label = top_label;
    else if (row == threshold_row) label = threshold_label;
    std::string line =
        pad_left(label, label_columns) + (label.empty() ? " │" : " ┤") + bars[static_cast<std::size_t>(row)];
    while (line.back() == ' ') line.pop_back();  // blank cells after the last bar: nothing to see
    lines.push_back(std::move(line));
  }

  // Ticks and their labels: as many as fit (4, 3 or 2) with 3 columns
  // between labels; the first starts at the first column, the last ends at
  // the last one, those between are centred on their tick.
  const int64_t span = spec.last_ms - spec.first_ms;
  const int label_width = static_cast<int>(tick_label(spec.first_ms, span).size());
  int ticks = 4;
  while (ticks > 2 && ticks * label_width + (ticks - 1) * 3 > plot) --ticks;
  std::string axis_line = std::string(static_cast<std::size_t>(label_columns), ' ') + " └";
  std::string label_line(static_cast<std::size_t>(plot), ' ');
  std::vector<int> tick_columns;
  for (int k = 0; k < ticks; ++k) {
    const int c = k * (plot - 1) / (ticks - 1);
    tick_columns.push_back(c);
    const int64_t t = k == 0 ? spec.first_ms : k == ticks - 1 ? spec.last_ms : axis.time_at(c);
    const int start = k == 0 ? 0 : k == ticks - 1 ? plot - label_width : c - label_width / 2;
    if (start < 0 || start + label_width > plot) continue;  // too narrow to say
    label_line.replace(static_cast<std::size_t>(start), static_cast<std::size_t>(label_width), tick_label(t, span));
  }
  for (int c = 0; c < plot; ++c) {
    axis_line += std::find(tick_columns.begin(), tick_columns.end(), c) != tick_columns.end() ? "┬" : "─";
  }
  lines.push_back(std::move(axis_line));

  std::vector<int> marked;
  marked.reserve(spec.marks.size());
  for (int64_t t : spec.marks) marked.push_back(axis.column_of(t));
  const std::string indent(static_cast<std::size_t>(margin), ' ');
  const std::string marks = mark_row(plot, marked, ink);
  if (!marks.empty()) lines.push_back(indent + marks);
  while (!label_line.empty() && label_line.back() == ' ') label_line.pop_back();
  lines.push_back(indent + label_line);
  return lines;
}

}  // namespace swthrottle::backtest
