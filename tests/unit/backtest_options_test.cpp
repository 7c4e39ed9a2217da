// The command line of `swthrottle backtest` (backtest/backtest_options.h),
// with argv arrays.
#include "backtest/backtest_options.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace {

using swthrottle::backtest::parse_backtest_options;
using swthrottle::backtest::parse_target;
using swthrottle::backtest::ParsedCommand;

ParsedCommand parse(std::vector<const char*> args) {
  args.insert(args.begin(), "backtest");
  return parse_backtest_options(static_cast<int>(args.size()), args.data());
}

// The usage error of `args`: exit status 2, no options, the text.
std::string usage_error(std::vector<const char*> args) {
  const ParsedCommand p = parse(std::move(args));
  CHECK_FALSE(p.options.has_value());
  CHECK(p.exit_status == 2);
  CHECK(p.text.rfind("swthrottle backtest: ", 0) == 0);
  CHECK(p.text.find("Try 'swthrottle backtest --help'") != std::string::npos);
  return p.text;
}

TEST_CASE("backtest options: the defaults") {
  const ParsedCommand p = parse({"-r", "rules.toml", "a.log", "b.log"});
  REQUIRE(p.options.has_value());
  const auto& o = *p.options;
  CHECK(o.backtest.run.rule_files == std::vector<std::string>{"rules.toml"});
  CHECK(o.backtest.run.inputs == std::vector<std::string>{"a.log", "b.log"});
  CHECK_FALSE(o.backtest.run.time.has_value());
  CHECK_FALSE(o.backtest.run.mode.has_value());
  CHECK(o.backtest.run.max_line == std::size_t{1} << 20);
  CHECK(o.backtest.only.empty());
  CHECK_FALSE(o.backtest.sweep.any());
  CHECK(o.backtest.against.empty());
  CHECK(o.backtest.top == 5);
  CHECK(o.backtest.target_alerts == 1);
  CHECK(o.backtest.target_ms == 86'400'000);
  CHECK_FALSE(o.json);
  CHECK(o.html.empty());
  CHECK(o.width == 0);
  CHECK(o.color == "auto");
}

TEST_CASE("backtest options: what each option sets") {
  const ParsedCommand p = parse(
      {"-r",     "a.toml",         "--rule",   "b.toml",     "--only",  "ssh",       "--only",   "flood",    "--sweep",
       "5..50",  "--sweep-window", "1m,5m",    "--target",   "3/1d",    "--against", "old.toml", "--format", "json",
       "--html", "out.html",       "--top",    "7",          "--width", "120",       "--color",  "never",    "--time",
       "log",    "--mode",         "accurate", "--max-line", "64K",     "-j",        "3",        "-"});
  REQUIRE_MESSAGE(p.options.has_value(), p.text);
  const auto& o = *p.options;
  CHECK(o.backtest.run.rule_files == std::vector<std::string>{"a.toml", "b.toml"});
  CHECK(o.backtest.run.inputs == std::vector<std::string>{"-"});
  CHECK(o.backtest.only == std::vector<std::string>{"ssh", "flood"});
  CHECK(o.backtest.sweep.values.size() == 10);
  CHECK(o.backtest.sweep.values.front() == "5");
  REQUIRE(o.backtest.sweep.windows.size() == 2);
  CHECK(o.backtest.sweep.windows[1].first == 300'000);
  CHECK(o.backtest.target_alerts == 3);
  CHECK(o.backtest.target_ms == 86'400'000);
  CHECK(o.backtest.against == std::vector<std::string>{"old.toml"});
  CHECK(o.json);
  CHECK(o.html == "out.html");
  CHECK(o.backtest.top == 7);
  CHECK(o.width == 120);
  CHECK(o.color == "never");
  CHECK(o.backtest.run.time == swthrottle::config::TimeSource::Log);
  CHECK(o.backtest.run.mode == swthrottle::config::Mode::Accurate);
  CHECK(o.backtest.run.max_line == 64 * 1024);
  CHECK(o.backtest.run.threads == 3);
  CHECK(parse({"-r", "r.toml", "--sweep", "auto"}).options->backtest.sweep.automatic);
  CHECK(parse({"-r", "r.toml", "--format", "text"}).options->json == false);
}

TEST_CASE("backtest options: a rules file is required") {
  const std::string text = usage_error({"a.log"});
  CHECK(text.find("--rule") != std::string::npos);
  usage_error({});
}

TEST_CASE("backtest options: --sweep and --sweep-window errors") {
  CHECK(usage_error({"-r", "r.toml", "--sweep", "5,x"}).find("--sweep: column 3: \"x\"") != std::string::npos);
  CHECK(usage_error({"-r", "r.toml", "--sweep", "50..5"}).find("must go up") != std::string::npos);
  CHECK(usage_error({"-r", "r.toml", "--sweep-window", "1m,zz"}).find("--sweep-window: column 4: \"zz\"") !=
        std::string::npos);
}

TEST_CASE("backtest options: a backtest runs on log time") {
  CHECK(usage_error({"-r", "r.toml", "--time", "arrival"}).find("--time arrival") != std::string::npos);
  usage_error({"-r", "r.toml", "--time", "wall"});
}

TEST_CASE("backtest options: --target") {
  const auto a = parse({"-r", "r.toml", "--target", "1 per 12h"});
  REQUIRE(a.options.has_value());
  CHECK(a.options->backtest.target_alerts == 1);
  CHECK(a.options->backtest.target_ms == 43'200'000);
  CHECK(usage_error({"-r", "r.toml", "--target", "often"}).find("--target: \"often\"") != std::string::npos);
  CHECK(usage_error({"-r", "r.toml", "--target", "3"}).find("--target") != std::string::npos);

  CHECK(parse_target("3/1d") == std::make_pair(uint64_t{3}, int64_t{86'400'000}));
  CHECK(parse_target("1 per 12h") == std::make_pair(uint64_t{1}, int64_t{43'200'000}));
  CHECK(parse_target("10 / 30m") == std::make_pair(uint64_t{10}, int64_t{1'800'000}));
  CHECK_FALSE(parse_target("").has_value());
  CHECK_FALSE(parse_target("3/").has_value());
  CHECK_FALSE(parse_target("/1d").has_value());
  CHECK_FALSE(parse_target("x/1d").has_value());
  CHECK_FALSE(parse_target("3 per never").has_value());
}

TEST_CASE("backtest options: --format, --width, --color, --top, --max-line ranges") {
  usage_error({"-r", "r.toml", "--format", "html"});
  usage_error({"-r", "r.toml", "--width", "59"});
  usage_error({"-r", "r.toml", "--width", "401"});
  usage_error({"-r", "r.toml", "--width", "wide"});
  CHECK(parse({"-r", "r.toml", "--width", "60"}).options->width == 60);
  CHECK(parse({"-r", "r.toml", "--width", "400"}).options->width == 400);
  usage_error({"-r", "r.toml", "--color", "sometimes"});
  usage_error({"-r", "r.toml", "--top", "-1"});
  usage_error({"-r", "r.toml", "--top", "1001"});
  CHECK(parse({"-r", "r.toml", "--top", "0"}).options->backtest.top == 0);
  CHECK(usage_error({"-r", "r.toml", "--max-line", "big"}).find("--max-line") != std::string::npos);
  usage_error({"-r", "r.toml", "--mode", "fast"});
  usage_error({"-r", "r.toml", "--bogus"});
}

TEST_CASE("backtest options: --help") {
  const ParsedCommand p = parse({"--help"});
  CHECK_FALSE(p.options.has_value());
  CHECK(p.exit_status == 0);
  CHECK(p.text.find("--sweep") != std::string::npos);
  CHECK(p.text.find("--against") != std::string::npos);
}

}  // namespace
