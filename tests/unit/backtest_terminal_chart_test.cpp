// backtest/terminal_chart.h and terminal_text.h: the pieces of the text
// report's charts, on numbers chosen so that the expected cells can be
// counted by hand.
#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

#include "backtest/terminal_chart.h"
#include "backtest/terminal_text.h"
#include "support/text_files.h"

using namespace swthrottle::backtest;
using swthrottle::test::count_of;

namespace {

// Code points of `s` (the charts' cells are one code point each).
int code_points(std::string_view s) {
  int n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

}  // namespace

TEST_CASE("backtest chart: fit_series: a series longer than the axis is merged column by column, by its maximum") {
  // 8 points of 10 ms onto 4 columns of 20 ms: two points per column.
  const TimeAxis axis{0, 80, 4};
  CHECK(fit_series(axis, 0, 10, {1, 5, 2, 0, 7, 3, 0, 9}) == std::vector<uint64_t>{5, 2, 7, 9});
  // A single peak survives the merge wherever it falls.
  CHECK(fit_series(axis, 0, 10, {0, 0, 0, 0, 0, 42, 0, 0}) == std::vector<uint64_t>{0, 0, 42, 0});
}

TEST_CASE("backtest chart: fit_series: a series shorter than the axis is spread over the columns of its time") {
  // 2 points of 40 ms onto 8 columns of 10 ms: each point spans 4 columns.
  const TimeAxis axis{0, 80, 8};
  CHECK(fit_series(axis, 0, 40, {3, 6}) == std::vector<uint64_t>{3, 3, 3, 3, 6, 6, 6, 6});
  // A series that starts later than the axis leaves the columns before it empty.
  CHECK(fit_series(axis, 40, 20, {4, 5}) == std::vector<uint64_t>{0, 0, 0, 0, 4, 4, 5, 5});
}

TEST_CASE("backtest chart: fit_series: a point across a column boundary counts in both columns") {
  const TimeAxis axis{0, 30, 3};  // columns of 10 ms
  CHECK(fit_series(axis, 5, 10, {8}) == std::vector<uint64_t>{8, 8, 0});
}

TEST_CASE(
    "backtest chart: TimeAxis: the first time is in the first column, the last in the last, outside times at the "
    "ends") {
  const TimeAxis axis{1000, 1000 + 3'600'000, 60};  // an hour, a minute per column
  CHECK(axis.column_of(1000) == 0);
  CHECK(axis.column_of(1000 + 3'600'000 - 1) == 59);
  CHECK(axis.column_of(1000 + 60'000) == 1);
  CHECK(axis.column_of(1000 + 59'999) == 0);
  CHECK(axis.column_of(0) == 0);
  CHECK(axis.column_of(int64_t{1} << 60) == 59);
  CHECK(axis.time_at(1) == 1000 + 60'000);
}

TEST_CASE("backtest chart: level_row: the row whose band holds a level") {
  CHECK(level_row(100, 100, 8) == 7);  // the top
  CHECK(level_row(50, 100, 8) == 3);   // half way: the top of row 3 is at 50
  CHECK(level_row(51, 100, 8) == 4);
  CHECK(level_row(25, 100, 8) == 1);
  CHECK(level_row(1, 100, 8) == 0);
  CHECK(level_row(0, 100, 8) == 0);
}

TEST_CASE("backtest chart: column_bars: heights in eighths, rounded, at least one eighth for a value above 0") {
  const auto rows = column_bars({0, 1, 8, 16, 12}, 16, 2, std::nullopt, {});
  REQUIRE(rows.size() == 2);
  // 16 on 2 rows: 1 eighth per unit. 12 = a full bottom row and half a top row.
  CHECK(rows[0] == "   █▄");
  CHECK(rows[1] == " ▁███");
}

TEST_CASE("backtest chart: column_bars: the threshold line fills the empty cells of its row only") {
  const auto rows = column_bars({0, 100, 0, 30}, 100, 4, uint64_t{50}, {});
  REQUIRE(rows.size() == 4);
  // 50 of 100 in 4 rows: the top of row 1 (the third line from the top).
  CHECK(rows[2] == "┄█┄▂");  // 30: 1.2 rows, a fifth of row 1 rounds to ▂
  CHECK(rows[0].find("┄") == std::string::npos);
  CHECK(rows[1].find("┄") == std::string::npos);
  CHECK(rows[3].find("┄") == std::string::npos);
}

TEST_CASE("backtest chart: column_bars and mark_row: an ink paints, no ink writes no escape") {
  const ChartInk ink{"\x1b[33m", "\x1b[31m", "\x1b[0m"};
  const auto painted = column_bars({0, 0, 9}, 10, 2, uint64_t{4}, ink);
  CHECK(painted[1] == "\x1b[33m┄┄\x1b[0m█");
  const auto plain = column_bars({0, 0, 9}, 10, 2, uint64_t{4}, {});
  CHECK(plain[1] == "┄┄█");
  CHECK(mark_row(5, {1, 2}, ink) == " \x1b[31m▲▲\x1b[0m");
}

TEST_CASE("backtest chart: mark_row: one mark per column however many fall in it, nothing after the last") {
  CHECK(mark_row(6, {0, 3, 3, 3}, {}) == "▲  ▲");
  CHECK(mark_row(6, {5}, {}) == "     ▲");
  CHECK(mark_row(6, {-1, 6}, {}).empty());
}

TEST_CASE("backtest chart: horizontal_bar: max fills the columns, 0 is no bar, anything else at least an eighth") {
  CHECK(horizontal_bar(10, 10, 5) == "█████");
  CHECK(horizontal_bar(0, 10, 5).empty());
  CHECK(horizontal_bar(1, 1'000'000, 5) == "▏");
  CHECK(horizontal_bar(5, 10, 5) == "██▌");
  CHECK(code_points(horizontal_bar(7, 10, 40)) == 28);
}

TEST_CASE("backtest chart: timeline_chart: every line within its width, the threshold on its row, marks at the ends") {
  TimelineSpec spec;
  spec.first_ms = 0;
  spec.last_ms = 4 * 3'600'000 - 1;  // 4 hours
  spec.start_ms = 0;
  spec.step_ms = 60'000;
  spec.points.assign(240, 10);
  spec.points[100] = 100;
  spec.threshold = 50;
  spec.marks = {0, spec.last_ms};
  spec.rows = 8;
  for (int width : {40, 60, 78, 118, 198}) {
    CAPTURE(width);
    spec.width = width;
    const auto lines = timeline_chart(spec, {});
    for (const std::string& l : lines) CHECK(code_points(l) <= width);
    REQUIRE(lines.size() == 8 + 3);  // rows, axis, marks, labels
    CHECK(lines[0].rfind("100 ┤", 0) == 0);
    // max 100, threshold 50: the line sits on row 3 of 0..7, the fifth from the top.
    CHECK(lines[4].rfind(" 50 ┤", 0) == 0);
    CHECK(lines[4].find("┄") != std::string::npos);
    for (int row : {0, 1, 2, 3, 5, 6, 7}) CHECK(lines[static_cast<std::size_t>(row)].find("┄") == std::string::npos);
    // The marks: under the first and the last column of the plot.
    const std::string& marks = lines[9];
    CHECK(count_of(marks, "▲") == 2);
    CHECK(code_points(marks) == width);
    CHECK(marks.rfind("     ▲", 0) == 0);  // the 5-column axis, then the first column
    CHECK(lines[10].find("00:00") == 5);
    CHECK(lines[10].find("03:59") != std::string::npos);
  }
}

TEST_CASE("backtest chart: timeline_chart: the scale reaches the threshold when every count is below it") {
  TimelineSpec spec;
  spec.first_ms = 0;
  spec.last_ms = 59'999;
  spec.step_ms = 1000;
  spec.points.assign(60, 3);
  spec.threshold = 12;
  spec.width = 70;
  const auto lines = timeline_chart(spec, {});
  CHECK(lines[0].rfind("12 ┤┄", 0) == 0);  // the threshold is the top of the scale
  CHECK(lines[0].find("▁") == std::string::npos);
  CHECK(lines.size() == 8 + 2);  // no marks: no mark row
}

TEST_CASE("backtest terminal_text: grouped digits, UTC times, spans") {
  CHECK(grouped(0) == "0");
  CHECK(grouped(999) == "999");
  CHECK(grouped(1203) == "1,203");
  CHECK(grouped(1234567) == "1,234,567");
  CHECK(utc_time(0) == "1970-01-01 00:00:00");
  CHECK(utc_time(1'793'592'000'000) == "2026-11-02 04:00:00");
  CHECK(utc_time(-1000) == "1969-12-31 23:59:59");
  CHECK(span_text(4 * 3'600'000 + 8 * 60'000 + 12'000) == "4h 8m");
  CHECK(span_text(2 * 86'400'000 + 3 * 3'600'000) == "2d 3h");
  CHECK(span_text(90'000) == "1m 30s");
  CHECK(span_text(60'000) == "1m");
  CHECK(span_text(45'000) == "45s");
  CHECK(span_text(250) == "250ms");
}

TEST_CASE("backtest terminal_text: fit_columns cuts on code points with an ellipsis and counts wide characters twice") {
  CHECK(fit_columns("abcdef", 6) == "abcdef");
  CHECK(fit_columns("abcdefg", 6) == "abcde…");
  CHECK(display_columns("日本語") == 6);
  CHECK(fit_columns("日本語のキー", 6) == "日本…");
  CHECK(display_columns(fit_columns("日本語のキー", 6)) <= 6);
  CHECK(fit_columns("é€ab", 3) == "é€…");
  // Control bytes are escaped, never passed through.
  CHECK(fit_columns("a\x1b[31mb", 20) == "a\\u001b[31mb");
  CHECK(display_columns("\x1b[1mbold\x1b[0m") == 4);
}

TEST_CASE("backtest terminal_text: wrap_words keeps every line within the width") {
  const auto lines = wrap_words("one two three four five six seven eight nine ten", 20, "  ", "    ");
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == "  one two three four");
  CHECK(lines[1] == "    five six seven");
  CHECK(lines[2] == "    eight nine ten");
  const auto cut = wrap_words(std::string(50, 'x'), 20, "", "");
  REQUIRE(cut.size() == 1);
  CHECK(display_columns(cut[0]) == 20);
}
