#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "config/expr.h"

using swthrottle::config::Expr;

namespace {

const std::vector<std::string> kAbc = {"a", "b", "c"};
const std::vector<std::string> kNginx = {"request", "error"};

// Compiles over events a, b, c and evaluates on their counts.
bool ev(const std::string& text, std::vector<uint64_t> counts, const std::vector<std::string>& names = kAbc) {
  auto e = Expr::parse(text, names);
  INFO("expression: ", text);
  INFO("error: ", e.ok() ? std::string() : e.error().what);
  REQUIRE(e.ok());
  return e->eval(counts);
}

struct Case {
  std::string text;
  std::vector<uint64_t> counts;  // a, b, c
  bool want;
};

void run(const std::vector<Case>& cases) {
  for (const auto& c : cases) {
    CAPTURE(c.text);
    CAPTURE(c.counts.size() > 0 ? c.counts[0] : 0);
    CAPTURE(c.counts.size() > 1 ? c.counts[1] : 0);
    CAPTURE(c.counts.size() > 2 ? c.counts[2] : 0);
    CHECK(ev(c.text, c.counts) == c.want);
  }
}

struct Bad {
  std::string text;
  int col;
  const char* what;
};

void run_errors(const std::vector<Bad>& cases, const std::vector<std::string>& names) {
  for (const auto& c : cases) {
    CAPTURE(c.text);
    auto e = Expr::parse(c.text, names);
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().what == c.what);
    CHECK(e.error().col == c.col);
  }
}

}  // namespace

TEST_CASE("expr: not binds looser than comparison") {
  // `not a > 5` is `not (a > 5)`; `(not a) > 5` would be false for every a.
  for (uint64_t a = 0; a <= 10; ++a) {
    CAPTURE(a);
    CHECK(ev("not a > 5", {a}) == (a <= 5));
    CHECK(ev("not a > 5", {a}) == ev("not (a > 5)", {a}));
  }
}

TEST_CASE("expr: precedence of and, or, not") {
  run({
      // a or (b and c), not (a or b) and c
      {"a or b and c", {1, 0, 0}, true},
      {"(a or b) and c", {1, 0, 0}, false},
      {"a or b and c", {0, 1, 0}, false},
      {"a or b and c", {0, 1, 1}, true},
      // (a and b) or c, not a and (b or c)
      {"a and b or c", {0, 1, 1}, true},
      {"a and (b or c)", {0, 1, 1}, false},
      // (not a) and b, not not (a and b)
      {"not a and b", {0, 0, 0}, false},
      {"not (a and b)", {0, 0, 0}, true},
      {"not a and b", {0, 1, 0}, true},
      // (not a) or b
      {"not a or b", {1, 1, 0}, true},
      {"not (a or b)", {1, 1, 0}, false},
      {"not not a", {5}, true},
      {"not not a", {0}, false},
      {"not not not a", {0}, true},
      {"a > 1 and b > 1 or c > 1", {0, 0, 2}, true},
      {"a > 1 and (b > 1 or c > 1)", {0, 0, 2}, false},
  });
}

TEST_CASE("expr: arithmetic precedence and associativity") {
  run({
      {"1 + 2 * 3 == 7", {}, true},
      {"1 + 2 * 3 == 9", {}, false},
      {"(1 + 2) * 3 == 9", {}, true},
      {"2 * 3 + 1 == 7", {}, true},
      {"1 + 6 / 2 == 4", {}, true},
      // left-associative: (a - b) - c and (a / b) / c
      {"a - b - c == 0", {5, 3, 2}, true},
      {"a - (b - c) == 4", {5, 3, 2}, true},
      {"a / b / c == 1", {8, 4, 2}, true},
      {"a / (b / c) == 4", {8, 4, 2}, true},
      {"a - b + c == 4", {5, 3, 2}, true},
      {"a / b * c == 4", {8, 4, 2}, true},
      // arithmetic binds tighter than comparison
      {"a + b > c", {1, 1, 1}, true},
      {"a > b + c", {1, 1, 1}, false},
      {"a * 2 >= b * 3", {3, 2, 0}, true},
      {"a * 2 >= b * 3", {2, 2, 0}, false},
      // double arithmetic, not integer
      {"a / b == 2.5", {5, 2, 0}, true},
      {"a / b > 2", {5, 2, 0}, true},
  });
}

TEST_CASE("expr: unary minus") {
  run({
      {"-a + 5 > 0", {3}, true},
      {"-a + 5 > 0", {6}, false},
      {"- a * 2 == -6", {3}, true},
      {"-a * -a == 9", {3}, true},
      {"--a == a", {3}, true},
      {"-(a - 10) == 7", {3}, true},
      {"a - -b == 5", {3, 2}, true},
      {"a--b == 5", {3, 2}, true},
      {"-a < 0", {1}, true},
      {"-a", {0}, false},
      {"-a", {2}, true},  // -2 is != 0: true
  });
}

TEST_CASE("expr: chained comparisons like Python") {
  run({
      {"a < b < c", {1, 2, 3}, true},
      {"a < b < c", {1, 3, 2}, false},
      {"a < b < c", {2, 1, 3}, false},
      // (c < b) < a would be (false) < 1 = true; chained it is false.
      {"c < b < a", {1, 2, 3}, false},
      {"a < b > c", {1, 3, 2}, true},
      {"a == b == c", {2, 2, 2}, true},
      {"a == b == c", {2, 2, 3}, false},
      {"a != b != c", {1, 2, 1}, true},  // a != c is not implied
      {"1 < 2 < 3 < 4", {}, true},
      {"1 < 3 < 2 < 4", {}, false},
      {"1 < 2 < 3 < 3", {}, false},
      {"0 < a <= 5", {0}, false},
      {"0 < a <= 5", {1}, true},
      {"0 < a <= 5", {5}, true},
      {"0 < a <= 5", {6}, false},
      {"a < b + 1 < c", {1, 1, 3}, true},
      {"a < b + 1 < c", {1, 2, 3}, false},
      {"not 0 < a <= 5", {6}, true},
      {"0 < a < 5 and b > 0", {3, 1}, true},
      {"0 < a < 5 and b > 0", {3, 0}, false},
  });
}

TEST_CASE("expr: numbers in boolean positions") {
  run({
      {"a", {0}, false},
      {"a", {3}, true},
      {"a - 3", {3}, false},
      {"a - 3", {4}, true},
      {"0.5", {}, true},
      {"0", {}, false},
      {"a and 0", {1}, false},
      {"a or 0", {1}, true},
      {"not a", {0}, true},
      {"a and b", {2, 3}, true},
      {"a >= .5", {1}, true},
      {"a > 5.", {5}, false},
      {"a > 0.05", {0}, false},
  });
}

TEST_CASE("expr: division by zero makes its comparison false") {
  run({
      {"a / b > 1", {5, 0}, false},
      {"a / b <= 1", {5, 0}, false},
      {"a / b == 1", {5, 0}, false},
      {"a / b != 1", {5, 0}, false},
      {"a / b == a / b", {5, 0}, false},
      {"0 / b == 0", {0, 0}, false},
      {"a / b * 0 == 0", {5, 0}, false},
      {"a / b - a / b < 1", {5, 0}, false},
      {"1 < a / b < 3", {5, 0}, false},
      {"a < 10 < a / b", {5, 0}, false},
      {"-(a / b) < 0", {5, 0}, false},
      // Inside and/or/not: only the comparison holding the division is false.
      {"not (a / b > 1)", {5, 0}, true},
      {"not a / b > 1", {5, 0}, true},
      {"a / b > 1 or c > 0", {5, 0, 1}, true},
      {"a / b > 1 or c > 0", {5, 0, 0}, false},
      {"c > 0 or a / b > 1", {5, 0, 1}, true},
      {"a / b > 1 and c > 0", {5, 0, 1}, false},
      {"c > 0 and a / b > 1", {5, 0, 1}, false},
      {"a / b < 1 or not a / b < 1", {5, 0}, true},
      // A bare value with a division by zero is false.
      {"a / b", {5, 0}, false},
      {"not a / b", {5, 0}, true},
      {"a / b or c", {5, 0, 1}, true},
      {"a / b and c", {5, 0, 1}, false},
      // A non-zero divisor behaves normally.
      {"a / b > 1", {5, 2}, true},
  });
}

TEST_CASE("expr: the nginx example at its edges") {
  const std::string when = "error / request > 0.05 and request >= 100";
  struct Row {
    uint64_t request, error;
    bool want;
  };
  const std::vector<Row> rows = {
      {100, 6, true},     // 0.06, exactly 100 requests
      {100, 5, false},    // 0.05 is not > 0.05
      {99, 50, false},    // too few requests
      {0, 0, false},      // 0 / 0
      {0, 5, false},      // 5 / 0
      {1000, 51, true},   // 0.051
      {1000, 50, false},  // 0.05
      {200, 11, true},    // 0.055
      {101, 6, true},    {100, 100, true}, {100, 0, false},
  };
  for (const auto& r : rows) {
    CAPTURE(r.request);
    CAPTURE(r.error);
    CHECK(ev(when, {r.request, r.error}, kNginx) == r.want);
  }
}

TEST_CASE("expr: text and whitespace") {
  auto e = Expr::parse("  a>5  ", kAbc);
  REQUIRE(e.ok());
  CHECK(e->text() == "  a>5  ");
  CHECK(e->eval(std::vector<uint64_t>{6}));
  CHECK_FALSE(e->eval(std::vector<uint64_t>{5}));
  CHECK(ev("a\t>=\n5", {5}));
  CHECK(ev("(a)>(4)", {5}));
}

TEST_CASE("expr: counts shorter than the event list read as zero") {
  CHECK_FALSE(ev("c > 0", {1, 1}));
  CHECK(ev("c == 0", {}));
}

TEST_CASE("expr: default-constructed is false") {
  Expr e;
  CHECK_FALSE(e.eval(std::vector<uint64_t>{1, 2, 3}));
}

TEST_CASE("expr: threshold is sum of the first n counts >= y") {
  struct Row {
    uint64_t y;
    std::size_t n;
    std::vector<uint64_t> counts;
    bool want;
  };
  constexpr uint64_t kBig = uint64_t{1} << 53;
  const std::vector<Row> rows = {
      {5, 2, {2, 2}, false},
      {5, 2, {2, 3}, true},
      {5, 2, {5, 0}, true},
      {5, 2, {0, 4}, false},
      {5, 2, {2, 2, 100}, false},  // only counts[0..n)
      {1, 1, {0}, false},
      {1, 1, {1}, true},
      {kBig + 1, 1, {kBig}, false},  // exact beyond double precision
      {kBig + 1, 1, {kBig + 1}, true},
      {UINT64_MAX, 2, {UINT64_MAX, 1}, true},  // saturates, does not wrap
      {UINT64_MAX, 2, {UINT64_MAX - 1, 0}, false},
      {3, 3, {1, 1}, false},  // missing counts are zero
  };
  for (const auto& r : rows) {
    CAPTURE(r.y);
    CAPTURE(r.n);
    CHECK(Expr::threshold(r.y, r.n).eval(r.counts) == r.want);
  }
}

TEST_CASE("expr: errors") {
  run_errors(
      {
          {"", 1, "empty expression"},
          {"   ", 1, "empty expression"},
          {"eror > 5", 1, "unknown event \"eror\" (events: request, error; did you mean \"error\"?)"},
          {"request > 5 and eror > 1", 17, "unknown event \"eror\" (events: request, error; did you mean \"error\"?)"},
          {"foo > 5", 1, "unknown event \"foo\" (events: request, error)"},
          {"NOT error", 1, "unknown event \"NOT\" (operators are lowercase: and, or, not)"},
          {"request > 5 AND error > 1", 13, "unexpected \"AND\" (operators are lowercase: and, or, not)"},
          {"request = 5", 9, "unexpected \"=\" (use == to compare)"},
          {"request > 5 && error > 1", 13, "unexpected \"&&\" (use and)"},
          {"request > 5 & error > 1", 13, "unexpected \"&\" (use and)"},
          {"request > 5 || error > 1", 13, "unexpected \"||\" (use or)"},
          {"!error", 1, "unexpected \"!\" (use not)"},
          {"(request > 5", 13, "missing \")\" for the \"(\" at column 1"},
          {"request > (5 + (error)", 23, "missing \")\" for the \"(\" at column 11"},
          {"(request > 5 error", 14, "expected \")\" for the \"(\" at column 1, found \"error\""},
          {"(request > 5 && error)", 14, "unexpected \"&&\" (use and)"},
          {"request > 5)", 12, "unmatched \")\""},
          {"request error", 9, "unexpected \"error\" (expected an operator, \"and\", \"or\" or the end)"},
          {"request > 5 error > 1", 13, "unexpected \"error\" (expected an operator, \"and\", \"or\" or the end)"},
          {"request >", 10, "unexpected end (expected an event name, a number or \"(\")"},
          {"request > > 5", 11, "unexpected \">\" (expected an event name, a number or \"(\")"},
          {"and request", 1, "unexpected \"and\" (expected an event name, a number or \"(\")"},
          {"request and or error", 13, "unexpected \"or\" (expected an event name, a number or \"(\")"},
          {"()", 2, "unexpected \")\" (expected an event name, a number or \"(\")"},
          {"not", 4, "unexpected end (expected an event name, a number or \"(\")"},
          // The leftmost error wins over a bad token further right.
          {"request > ) && error", 11, "unexpected \")\" (expected an event name, a number or \"(\")"},
          // A true/false used as a number.
          {"(request > 5) + 1", 10, "the result of \">\" is true or false and cannot be used as a number"},
          {"request + (error > 1)", 18, "the result of \">\" is true or false and cannot be used as a number"},
          {"-(request > 1)", 11, "the result of \">\" is true or false and cannot be used as a number"},
          {"(request > 1) > 0", 10, "the result of \">\" is true or false and cannot be used as a number"},
          {"0 < (request > 1)", 14, "the result of \">\" is true or false and cannot be used as a number"},
          {"(request and error) * 2", 10, "the result of \"and\" is true or false and cannot be used as a number"},
          {"(request or error) / 2", 10, "the result of \"or\" is true or false and cannot be used as a number"},
          {"(not request) + 1", 2, "the result of \"not\" is true or false and cannot be used as a number"},
          {"(0 < request < 5) * 2", 4, "the result of \"<\" is true or false and cannot be used as a number"},
          // Lexical errors.
          {"request > 5m", 11, "invalid number \"5m\""},
          {"request > 1.2.3", 11, "invalid number \"1.2.3\""},
          {"request > 0x10", 11, "invalid number \"0x10\""},
          {"request > 1e3", 11, "invalid number \"1e3\""},
          {"request > 5 # note", 13, "unexpected \"#\""},
          {"request > .", 11, "unexpected \".\""},
          {"request > 5 \xc3\xa9", 13, "unexpected \"\xc3\xa9\""},
      },
      kNginx);
}

TEST_CASE("expr: unknown event without event names") { run_errors({{"x > 1", 1, "unknown event \"x\""}}, {}); }

TEST_CASE("expr: nesting limit") {
  const std::vector<std::string> names = {"request"};
  auto nest = [](const std::string& open, int levels, const std::string& close) {
    std::string s;
    for (int i = 0; i < levels; ++i) s += open;
    s += "request";
    for (int i = 0; i < levels; ++i) s += close;
    return s;
  };
  const std::string too_deep = "expression is nested too deeply (more than 64 levels)";

  CHECK(ev(nest("(", 64, ")"), {1}, names));
  auto parens = Expr::parse(nest("(", 65, ")"), names);
  REQUIRE_FALSE(parens.ok());
  CHECK(parens.error().what == too_deep);
  CHECK(parens.error().col == 65);

  CHECK(ev(nest("not ", 64, ""), {1}, names));  // an even number of nots
  auto nots = Expr::parse(nest("not ", 65, ""), names);
  REQUIRE_FALSE(nots.ok());
  CHECK(nots.error().what == too_deep);
  CHECK(nots.error().col == 4 * 64 + 1);

  auto minus = Expr::parse(nest("-", 65, ""), names);
  REQUIRE_FALSE(minus.ok());
  CHECK(minus.error().what == too_deep);
  CHECK(minus.error().col == 65);
}

TEST_CASE("expr: evaluation stack limit") {
  const std::vector<std::string> names = {"request"};
  // "request + (request + (... (request)))": k levels keep k + 1 values on
  // the stack at the innermost request.
  auto right_nested = [](int k) {
    std::string s = "request";
    for (int i = 0; i < k; ++i) s = "request + (" + s + ")";
    return s;
  };
  CHECK(ev(right_nested(63) + " == 64", {1}, names));
  CHECK_FALSE(ev(right_nested(63) + " == 64", {2}, names));

  const std::string deep = right_nested(64);
  auto e = Expr::parse(deep, names);
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().what == "expression is too deeply nested to evaluate (it needs more than 64 stack slots)");
  CHECK(e.error().col == static_cast<int>(deep.rfind("request")) + 1);

  // Long but flat expressions need only a few slots.
  std::string flat = "request";
  for (int i = 0; i < 999; ++i) flat += " + request";
  CHECK(ev(flat + " == 1000", {1}, names));
}

// previous(e): e's count in the window before, at counts[E + i].
TEST_CASE("expr: previous() reads the previous window's counts after the window's") {
  const std::vector<std::string> names = {"request", "error"};
  auto parse = [&](const std::string& text) {
    auto e = Expr::parse(text, names);
    INFO("error: ", e.ok() ? std::string() : e.error().what);
    REQUIRE(e.ok());
    return *e;
  };
  const Expr spike = parse("error >= 3 * previous(error) and error >= 20");
  CHECK(spike.uses_previous());
  CHECK_FALSE(spike.uses_distinct());
  // counts: request, error, previous(request), previous(error)
  CHECK(spike.eval(std::vector<uint64_t>{0, 30, 0, 10}));
  CHECK_FALSE(spike.eval(std::vector<uint64_t>{0, 29, 0, 10}));
  CHECK_FALSE(spike.eval(std::vector<uint64_t>{0, 19, 0, 0}));
  CHECK(spike.eval(std::vector<uint64_t>{0, 20, 0, 0}));  // an empty previous window is 0
  // A spike down, and previous() beside the event of the same name.
  const Expr drop = parse("request <= previous(request) / 2 and previous(request) >= 100");
  CHECK(drop.eval(std::vector<uint64_t>{50, 0, 100, 0}));
  CHECK_FALSE(drop.eval(std::vector<uint64_t>{51, 0, 100, 0}));
  CHECK_FALSE(drop.eval(std::vector<uint64_t>{10, 0, 99, 0}));
  // Without the previous window's counts, previous(e) reads 0.
  CHECK(drop.eval(std::vector<uint64_t>{0, 0}) == false);
  CHECK_FALSE(parse("error > 1").uses_previous());
  // An event named "previous" is an event; previous( is the function.
  const std::vector<std::string> odd = {"previous"};
  auto e = Expr::parse("previous > previous(previous)", odd);
  REQUIRE(e.ok());
  CHECK(e->eval(std::vector<uint64_t>{3, 2}));
  CHECK_FALSE(e->eval(std::vector<uint64_t>{2, 2}));
}

TEST_CASE("expr: distinct names the count of distinct values, in a rule that counts them") {
  const std::vector<std::string> names = {"login"};
  const swthrottle::config::ExprNames with{names, true};
  auto e = Expr::parse("distinct > 5 and login >= 10", with);
  REQUIRE(e.ok());
  CHECK(e->uses_distinct());
  CHECK(e->eval(std::vector<uint64_t>{10, 6}));  // login, then distinct
  CHECK_FALSE(e->eval(std::vector<uint64_t>{10, 5}));
  CHECK_FALSE(e->eval(std::vector<uint64_t>{9, 6}));
  // Elsewhere `distinct` is an unknown event.
  auto plain = Expr::parse("distinct > 5", names);
  REQUIRE_FALSE(plain.ok());
  CHECK(plain.error().what == "unknown event \"distinct\" (events: login)");
  auto typo = Expr::parse("distint > 5", with);
  REQUIRE_FALSE(typo.ok());
  CHECK(typo.error().what == "unknown event \"distint\" (events: login; or distinct)");
}

TEST_CASE("expr: previous() errors") {
  const std::vector<std::string> names = {"request", "error"};
  struct Row {
    std::string text;
    int col;
    std::string what;
    bool distinct = false;
  };
  const Row rows[] = {
      {"previous(eror) > 1", 10, "unknown event \"eror\" (events: request, error; did you mean \"error\"?)"},
      {"previous() > 1", 10, "unexpected \")\" (previous() takes an event name, e.g. previous(request))"},
      {"previous(5) > 1", 10, "unexpected \"5\" (previous() takes an event name, e.g. previous(request))"},
      {"previous(error > 1", 16, "unexpected \">\" (expected \")\" to close the previous( at column 1)"},
      {"previous(error", 15, "unexpected end (expected \")\" to close the previous( at column 1)"},
      {"previous > 1", 1, "unknown event \"previous\" (events: request, error)"},
      {"previous(distinct) > 1", 10, "previous(distinct): a rule that counts distinct values keeps no previous window",
       true},
  };
  for (const Row& r : rows) {
    CAPTURE(r.text);
    auto e = Expr::parse(r.text, swthrottle::config::ExprNames{names, r.distinct});
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().col == r.col);
    CHECK(e.error().what == r.what);
  }
}
