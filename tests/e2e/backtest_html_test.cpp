// The HTML report as a reader sees it: the page render_html() writes is
// opened in headless Chromium (Debian package chromium), its screenshot
// decoded (support/png.h) and looked at pixel by pixel, for the colours
// svg_chart.h fixes: the series blue, the threshold and the alerts red, the
// rule's own sweep candidate orange. A missing chromium fails the test: a
// skipped screenshot test would pass a page nobody has looked at.
//
// Each page takes Chromium about a second to draw on an idle machine (a few
// on a loaded one); the timeout is far above that.
#include <doctest/doctest.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "backtest/report_html.h"
#include "support/backtest_fixtures.h"
#include "support/png.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "support/test_daemon.h"

namespace {

using swthrottle::test::Image;
using swthrottle::test::Rgba;
using swthrottle::test::TempDir;

constexpr uint32_t kWidth = 1000;
constexpr uint32_t kHeight = 1400;

// The colours of backtest/svg_chart.h, as pixels.
constexpr Rgba kBlue{0x3b, 0x6f, 0xd8};
constexpr Rgba kRed{0xd6, 0x27, 0x28};
constexpr Rgba kOrange{0xff, 0x7f, 0x0e};

// The first kWidth x kHeight pixels of `html` as Chromium draws them. Its
// profile and everything else it writes stay in `dir` (HOME and
// --user-data-dir), never in the real home. --disable-dev-shm-usage: a
// container's small /dev/shm would crash its renderer.
Image screenshot_file(const TempDir& dir, const std::string& page) {
  const std::string chromium = swthrottle::test::find_program({"chromium"});
  REQUIRE_MESSAGE(!chromium.empty(), "chromium not found in PATH: apt-get install chromium (.ci/setup does)");
  const std::string png = dir.file("shot.png");
  const swthrottle::test::RunResult r = swthrottle::test::run_process(
      {chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
       "--window-size=" + std::to_string(kWidth) + "," + std::to_string(kHeight), "--no-first-run",
       "--disable-dev-shm-usage", "--user-data-dir=" + dir.file("chromium-profile"), "--screenshot=" + png,
       "file://" + page},
      "", std::chrono::seconds(25), {{"HOME", dir.path()}});
  REQUIRE_MESSAGE(!r.timed_out, "chromium did not finish in 25 s: " << r.err);
  REQUIRE_MESSAGE(r.exit_status == 0, "chromium failed: " << r.err);
  const Image img = swthrottle::test::decode_png(swthrottle::test::read_file(png));
  REQUIRE(img.width == kWidth);
  REQUIRE(img.height == kHeight);
  return img;
}

Image screenshot(const TempDir& dir, const std::string& html) {
  return screenshot_file(dir, dir.write("report.html", html));
}

// Within a few steps of `c` in every channel: the inside of a shape, not the
// anti-aliased edge where it blends into the white page.
bool near(const Rgba& p, const Rgba& c) {
  const auto d = [](uint8_t a, uint8_t b) { return std::abs(int{a} - int{b}); };
  return d(p.r, c.r) <= 24 && d(p.g, c.g) <= 24 && d(p.b, c.b) <= 24;
}

// The pixels of one colour: how many, and their bounding box.
struct Found {
  std::size_t count = 0;
  uint32_t x0 = UINT32_MAX, y0 = UINT32_MAX, x1 = 0, y1 = 0;
  double density() const { return count == 0 ? 0 : double(count) / (double(x1 - x0 + 1) * double(y1 - y0 + 1)); }
};

Found find(const Image& img, const Rgba& c, uint32_t from_y = 0, uint32_t to_y = kHeight) {
  Found f;
  for (uint32_t y = from_y; y < to_y && y < img.height; ++y) {
    for (uint32_t x = 0; x < img.width; ++x) {
      if (!near(img.at(x, y), c)) continue;
      ++f.count;
      f.x0 = std::min(f.x0, x);
      f.x1 = std::max(f.x1, x);
      f.y0 = std::min(f.y0, y);
      f.y1 = std::max(f.y1, y);
    }
  }
  return f;
}

std::size_t not_white(const Image& img) {
  std::size_t n = 0;
  for (const Rgba& p : img.pixels) n += (p.r < 245 || p.g < 245 || p.b < 245) ? 1 : 0;
  return n;
}

// The row with the most pixels of colour c, and that many.
std::pair<uint32_t, std::size_t> fullest_row(const Image& img, const Rgba& c) {
  std::pair<uint32_t, std::size_t> best{0, 0};
  for (uint32_t y = 0; y < img.height; ++y) {
    std::size_t n = 0;
    for (uint32_t x = 0; x < img.width; ++x) n += near(img.at(x, y), c) ? 1 : 0;
    if (n > best.second) best = {y, n};
  }
  return best;
}

// The lowest row with more than `min` pixels of colour c (a chart's axis,
// not a legend's swatch), or 0.
uint32_t last_row_with(const Image& img, const Rgba& c, std::size_t min) {
  uint32_t last = 0;
  for (uint32_t y = 0; y < img.height; ++y) {
    std::size_t n = 0;
    for (uint32_t x = 0; x < img.width; ++x) n += near(img.at(x, y), c) ? 1 : 0;
    if (n > min) last = y;
  }
  return last;
}

}  // namespace

TEST_CASE(
    "backtest html: Chromium draws the series blue, the threshold and the alerts red, the current candidate "
    "orange") {
  TempDir dir;
  const Image img = screenshot(dir, swthrottle::backtest::render_html(swthrottle::test::sample_backtest(true)));
  const std::size_t total = std::size_t{kWidth} * kHeight;

  // Not blank, and on white.
  CHECK(not_white(img) > total / 30);
  CHECK(not_white(img) < total / 2);

  const Found blue = find(img, kBlue);
  CHECK(blue.count > 5'000);  // the filled area (the legend's swatch is 120 pixels)

  const Found red = find(img, kRed);
  CHECK(red.count > 300);
  // The threshold: a long dashed red row through the blue area, with the
  // blue spikes (count 30 over Y = 20) above it and the rest of the area
  // below it.
  const auto [threshold_y, threshold_len] = fullest_row(img, kRed);
  CHECK(threshold_len > 300);
  // (The area's bottom is its lowest wide blue row: the legend's swatch
  // under the chart is blue too.)
  const uint32_t area_bottom = last_row_with(img, kBlue, 400);
  CHECK(blue.y0 < threshold_y);
  CHECK(area_bottom > threshold_y);
  // The alert marks: red just under the area (the time axis), one triangle
  // at each of the three spikes, so spread across the chart.
  const Found marks = find(img, kRed, area_bottom + 1, area_bottom + 20);
  CHECK(marks.count > 3 * 15);
  CHECK(marks.x1 - marks.x0 > 400);

  // The current candidate: one solid orange bar, under the timeline.
  const Found orange = find(img, kOrange);
  CHECK(orange.count > 300);
  CHECK(orange.density() > 0.9);
  CHECK(orange.x1 - orange.x0 + 1 >= 20);
  CHECK(orange.y1 - orange.y0 + 1 >= 8);
  CHECK(orange.y0 > area_bottom);
}

TEST_CASE("backtest html: a rule without threshold or alerts puts no red on the page") {
  TempDir dir;
  const Image img = screenshot(dir, swthrottle::backtest::render_html(swthrottle::test::sample_backtest(false)));
  CHECK(not_white(img) > std::size_t{kWidth} * kHeight / 30);
  CHECK(find(img, kBlue).count > 5'000);
  CHECK(find(img, kRed).count == 0);
  CHECK(find(img, kOrange).count > 0);  // the sweep is there: its current bar, 0 alerts, 2 px high
}

TEST_CASE("backtest html: the page `swthrottle backtest --html` writes for the sshd week draws its alerts") {
  // The real binary on the shipped week: Y = 5 raises 111 alerts, so the
  // threshold line and the marks are red, the counts blue, and the sweep's
  // current candidate (5) orange.
  TempDir dir;
  const std::string page = dir.file("sshd.html");
  const swthrottle::test::RunResult r =
      swthrottle::test::run_process({SWTHROTTLE_BINARY, "backtest", "--html", page, "--sweep", "3,5,10", "-r",
                                     std::string(SWTHROTTLE_SOURCE_DIR) + "/examples/sshd/rules.toml",
                                     std::string(SWTHROTTLE_SOURCE_DIR) + "/examples/sshd/auth-week.log"},
                                    "", std::chrono::seconds(30));
  REQUIRE(r.exit_status == 0);
  CHECK(r.out.find("ssh-bruteforce") != std::string::npos);  // the text report still goes to stdout
  const Image img = screenshot_file(dir, page);
  CHECK(find(img, kBlue).count > 2'000);
  const auto [threshold_y, threshold_len] = fullest_row(img, kRed);
  CHECK(threshold_len > 300);
  const uint32_t area_bottom = last_row_with(img, kBlue, 400);
  const Found marks = find(img, kRed, area_bottom + 1, area_bottom + 20);
  CHECK(marks.x1 - marks.x0 > 400);  // alerts all week long
  CHECK(find(img, kOrange).count > 100);
}
