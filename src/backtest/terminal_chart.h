// Charts drawn with characters for the backtest's text report: a timeline of
// a count over log time (vertical bars in eighth blocks, a threshold line,
// marks under it, a time axis) and horizontal bars. Pure functions: numbers
// in, lines of text out; no knowledge of rules or results (report_text.cpp
// decides what to chart).
//
// Every line a function here returns takes exactly the columns it is asked
// for or fewer (the block characters, "┄", "▲" and the box-drawing corners
// are one column each). Colour is optional and comes in as ANSI sequences
// (ChartInk); with an empty ink no escape byte is written.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace swthrottle::backtest {

// The SGR sequences a chart paints its parts with; all empty: no colour.
struct ChartInk {
  std::string_view threshold;  // the threshold line
  std::string_view mark;       // the alert marks
  std::string_view reset;      // back to the terminal's default
};

// Log time laid onto `columns` columns: column c covers
// [first + c*len/columns, first + (c+1)*len/columns) with len = end - first,
// in exact (not rounded) time, so the columns share the span evenly.
struct TimeAxis {
  int64_t first_ms = 0;
  int64_t end_ms = 1;  // excluded; > first_ms
  int columns = 1;     // >= 1

  // The column of time t; a time outside the axis goes to the nearest end.
  int column_of(int64_t t_ms) const;
  // The time column c starts at.
  int64_t time_at(int column) const;
};

// Points of a series (point i covers [start + i*step, start + (i+1)*step))
// laid onto the axis' columns: each column is the maximum of the points that
// overlap it, so a series longer than the axis is merged by its maximum (a
// peak is never averaged away) and a shorter one is spread (a point spans
// all the columns of its time). A column no point overlaps is 0.
std::vector<uint64_t> fit_series(const TimeAxis& axis, int64_t start_ms, int64_t step_ms,
                                 const std::vector<uint64_t>& points);

// On a scale from 0 to `top` drawn in `rows` rows (0 = the bottom one), the
// row whose band holds `level`: its top edge is the first at or above it.
int level_row(uint64_t level, uint64_t top, int rows);

// Vertical bars, one column per value on a scale from 0 to `top` (> 0),
// `rows` rows, top row first. A value's height is rounded to an eighth of a
// row (▁..█), and any value above 0 shows at least ▁. With a threshold, the
// empty cells of its level_row() are drawn "┄".
std::vector<std::string> column_bars(const std::vector<uint64_t>& values, uint64_t top, int rows,
                                     std::optional<uint64_t> threshold, const ChartInk& ink);

// A row of `columns` cells with "▲" in each of `marked` (several times the
// same column: one mark; columns outside 0..columns-1 are ignored).
std::string mark_row(int columns, const std::vector<int>& marked, const ChartInk& ink);

// A horizontal bar for `value` on a scale where `max` fills `columns`
// columns, in eighth blocks (▏..█): "" for 0, at least "▏" for any value
// above 0, exactly `columns` "█" for max.
std::string horizontal_bar(uint64_t value, uint64_t max, int columns);

// Everything a timeline shows.
struct TimelineSpec {
  std::vector<uint64_t> points;  // the series (see fit_series)
  int64_t start_ms = 0;
  int64_t step_ms = 1;
  int64_t first_ms = 0;  // the axis: first to last log time, both included
  int64_t last_ms = 0;
  std::optional<uint64_t> threshold;
  std::vector<int64_t> marks;  // times to mark under the chart
  int width = 80;              // the whole chart's columns, axis included
  int rows = 8;
};

// A timeline in `width` columns: a left axis labelled with the top of the
// scale (the larger of the highest point and the threshold) and the
// threshold, the bars, the time axis with ticks, the marks, and 2 to 4 UTC
// time labels under the ticks (their precision from the span: "04:13:20",
// "04:13", "11-02 04:13" or "2026-11-02").
std::vector<std::string> timeline_chart(const TimelineSpec& spec, const ChartInk& ink);

}  // namespace swthrottle::backtest
