#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "util/json.h"

using swthrottle::append_json_string;
using swthrottle::append_rfc3339_ms;
using swthrottle::append_text_escaped;
using swthrottle::append_utf8_one_line;
using swthrottle::append_utf8_repaired;

namespace {

std::string json(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

std::string repaired(std::string_view s) {
  std::string out;
  append_utf8_repaired(out, s);
  return out;
}

std::string one_line(std::string_view s) {
  std::string out;
  append_utf8_one_line(out, s);
  return out;
}

std::string text(std::string_view s) {
  std::string out;
  append_text_escaped(out, s);
  return out;
}

std::string rfc3339(int64_t ms) {
  std::string out;
  append_rfc3339_ms(out, ms);
  return out;
}

#define FFFD "\xEF\xBF\xBD"

struct Case {
  std::string_view in;
  std::string_view want;
};

}  // namespace

TEST_CASE("json: escaping of ASCII") {
  using namespace std::string_view_literals;
  const Case cases[] = {
      {""sv, R"("")"sv},
      {"abc"sv, R"("abc")"sv},
      {"a\"b\\c"sv, R"("a\"b\\c")"sv},
      {"\n\t\r\b\f"sv, R"("\n\t\r\b\f")"sv},
      {"\x01\x1f\x1b"sv, R"("\u0001\u001f\u001b")"sv},
      {"a\0b"sv, R"("a\u0000b")"sv},
      {"\x7f"sv, "\"\x7f\""sv},  // DEL needs no escape in JSON
      {"/ ' <>&"sv, R"("/ ' <>&")"sv},
      // Specials at every position of an 8-byte block and past it.
      {"0123456\"89abcdef"sv, R"("0123456\"89abcdef")"sv},
      {"01234567\\9abcdef\n"sv, R"("01234567\\9abcdef\n")"sv},
      {"\"1234567"sv, R"("\"1234567")"sv},
  };
  for (const auto& c : cases) {
    CAPTURE(c.in);
    CHECK(json(c.in) == c.want);
  }
}

TEST_CASE("json: long plain runs are copied whole") {
  const std::string run(1000, 'x');
  CHECK(json(run) == "\"" + run + "\"");
  CHECK(json(run + "\t" + run) == "\"" + run + "\\t" + run + "\"");
  // Every position of a special byte relative to the 8-byte blocks.
  for (std::size_t pos = 0; pos < 20; ++pos) {
    std::string in(20, 'a');
    in[pos] = '\x02';
    std::string want = "\"" + std::string(pos, 'a') + "\\u0002" + std::string(19 - pos, 'a') + "\"";
    CAPTURE(pos);
    CHECK(json(in) == want);
  }
}

TEST_CASE("json: valid UTF-8 is kept as raw bytes") {
  const std::string_view valid[] = {
      "\xC3\xA9",          // é U+00E9
      "\xC2\x80",          // U+0080, smallest 2-byte
      "\xDF\xBF",          // U+07FF
      "\xE0\xA0\x80",      // U+0800, smallest 3-byte
      "\xE2\x82\xAC",      // € U+20AC
      "\xED\x9F\xBF",      // U+D7FF, just below the surrogates
      "\xEE\x80\x80",      // U+E000, just above them
      "\xEF\xBF\xBF",      // U+FFFF
      "\xF0\x90\x80\x80",  // U+10000, smallest 4-byte
      "\xF0\x9F\x98\x80",  // 😀 U+1F600
      "\xF4\x8F\xBF\xBF",  // U+10FFFF, the largest
      "\xE2\x80\xA8",      // U+2028 is valid JSON as is
  };
  for (std::string_view v : valid) {
    CAPTURE(v);
    CHECK(json(v) == "\"" + std::string(v) + "\"");
    CHECK(repaired(v) == v);
  }
  CHECK(json("caf\xC3\xA9 \"x\"") == "\"caf\xC3\xA9 \\\"x\\\"\"");
}

TEST_CASE("json: invalid UTF-8 becomes U+FFFD per maximal subpart") {
  const Case cases[] = {
      {"\x80", FFFD},                             // lone continuation byte
      {"\xBF\x80", FFFD FFFD},                    // each stray continuation is one
      {"\xC0\xAF", FFFD FFFD},                    // overlong '/': C0 never starts a sequence
      {"\xC1\xBF", FFFD FFFD},                    // overlong, C1 neither
      {"\xE0\x80\x80", FFFD FFFD FFFD},           // overlong 3-byte: E0 wants A0..BF
      {"\xE0\x9F\xBF", FFFD FFFD FFFD},           // overlong U+07FF
      {"\xF0\x8F\xBF\xBF", FFFD FFFD FFFD FFFD},  // overlong 4-byte: F0 wants 90..BF
      {"\xED\xA0\x80", FFFD FFFD FFFD},           // surrogate U+D800
      {"\xED\xBF\xBF", FFFD FFFD FFFD},           // surrogate U+DFFF
      {"\xF4\x90\x80\x80", FFFD FFFD FFFD FFFD},  // U+110000
      {"\xF5\x80\x80\x80", FFFD FFFD FFFD FFFD},  // F5..FF never start a sequence
      {"\xFE", FFFD},
      {"\xFF", FFFD},
      {"\xC3", FFFD},      // truncated at the end of input
      {"\xE2\x82", FFFD},  // one U+FFFD for lead + the continuation it got
      {"\xF0\x9F\x98", FFFD},
      {"\xE2\x82"
       "A",
       FFFD "A"},  // cut short by ASCII
      {"\xE2"
       "A",
       FFFD "A"},
      {"\xF0\x9F\x98\xF0\x9F\x98\x80", FFFD "\xF0\x9F\x98\x80"},  // cut short by a valid sequence
      {"\xC3\xC3\xA9", FFFD "\xC3\xA9"},
      // The example of Unicode §3.9 (Table 3-8).
      {"\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64", "a" FFFD FFFD FFFD "b" FFFD "c" FFFD FFFD "d"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.in);
    CHECK(json(c.in) == "\"" + std::string(c.want) + "\"");
    CHECK(repaired(c.in) == c.want);
    CHECK(one_line(c.in) == c.want);
    CHECK(text(c.in) == c.want);
  }
}

TEST_CASE("json: invalid UTF-8 mixed with escapes") {
  CHECK(json("a\xFF\n\"\xE2\x82") == "\"a" FFFD "\\n\\\"" FFFD "\"");
  CHECK(json(std::string_view("\0\x80", 2)) == "\"\\u0000" FFFD "\"");
}

TEST_CASE("json: repair without escaping keeps control bytes") {
  using namespace std::string_view_literals;
  CHECK(repaired("a\"b\\c\n\t\x01\0"sv) == "a\"b\\c\n\t\x01\0"sv);
  CHECK(repaired("x\xFFy") == "x" FFFD "y");
}

TEST_CASE("json: one-line repair writes newlines as \\n and \\r") {
  CHECK(one_line("a\nb") == "a\\nb");
  CHECK(one_line("a\r\nb") == "a\\r\\nb");
  CHECK(one_line("tab\there \"q\" back\\slash\x1b[0m") == "tab\there \"q\" back\\slash\x1b[0m");
  CHECK(one_line("0123456789\n") == "0123456789\\n");
}

TEST_CASE("json: text escaping of every control character and the backslash") {
  using namespace std::string_view_literals;
  // Every byte 0x00-0x7F: the C0 controls as JSON writes them, DEL as \u007f,
  // a backslash doubled, all other ASCII ('"' included) as it is.
  for (int b = 0; b < 0x80; ++b) {
    const char c = static_cast<char>(b);
    std::string want;
    if (b == '\\') {
      want = R"(\\)";
    } else if (b < 0x20 || b == 0x7F) {
      want = json(std::string_view(&c, 1));  // "\..." with its quotes
      want = want.substr(1, want.size() - 2);
      if (b == 0x7F) want = R"(\u007f)";
    } else {
      want = std::string(1, c);
    }
    CAPTURE(b);
    CHECK(text(std::string_view(&c, 1)) == want);
  }
  CHECK(text("\n\t\r\b\f\x1b\0"sv) == R"(\n\t\r\b\f\u001b\u0000)"sv);
  // The C1 controls U+0080-U+009F (two bytes each in UTF-8), and their
  // neighbours U+007F (DEL) and U+00A0 (no-break space, not a control).
  for (unsigned char b = 0x80; b <= 0x9F; ++b) {
    const char c1[2] = {'\xC2', static_cast<char>(b)};
    char want[7];
    std::snprintf(want, sizeof want, "\\u00%02x", b);
    CAPTURE(b);
    CHECK(text(std::string_view(c1, 2)) == want);
  }
  CHECK(text("\xC2\xA0\xC2\xBF\xC3\x80") == "\xC2\xA0\xC2\xBF\xC3\x80");
  // Valid text and lone C1 bytes (invalid UTF-8, so U+FFFD, never raw).
  CHECK(text("é 日本 \xF0\x9F\x98\x80") == "é 日本 \xF0\x9F\x98\x80");
  CHECK(text("\x85\x9b") == FFFD FFFD);
  CHECK(text(R"(C:\dir "q")") == R"(C:\\dir "q")");
  CHECK(text("a\xFF\x1b\xE2\x82\\") == "a" FFFD R"(\u001b)" FFFD R"(\\)");
}

TEST_CASE("json: text escaping at every position of the 8-byte blocks") {
  const std::string_view specials[][2] = {
      {"\x1b", R"(\u001b)"}, {"\x7f", R"(\u007f)"}, {"\\", R"(\\)"}, {"\xC2\x85", R"(\u0085)"}, {"\t", R"(\t)"}};
  for (const auto& sp : specials) {
    for (std::size_t pos = 0; pos < 20; ++pos) {
      std::string in(20, 'a');
      in.replace(pos, 1, sp[0]);
      const std::string want = std::string(pos, 'a') + std::string(sp[1]) + std::string(19 - pos, 'a');
      CAPTURE(sp[1]);
      CAPTURE(pos);
      CHECK(text(in) == want);
    }
  }
  const std::string run(1000, 'x');
  CHECK(text(run + "\x1b" + run) == run + R"(\u001b)" + run);
}

TEST_CASE("json: appends after existing content") {
  std::string out = "x=";
  append_json_string(out, "y");
  append_rfc3339_ms(out, 0);
  append_utf8_repaired(out, "\xFF");
  CHECK(out == "x=\"y\"1970-01-01T00:00:00.000Z" FFFD);
}

TEST_CASE("json: RFC 3339 with milliseconds") {
  // Epoch seconds from `date -u -d ... +%s`.
  struct {
    int64_t ms;
    std::string_view want;
  } cases[] = {
      {0, "1970-01-01T00:00:00.000Z"},
      {1, "1970-01-01T00:00:00.001Z"},
      {999, "1970-01-01T00:00:00.999Z"},
      {86'399'999, "1970-01-01T23:59:59.999Z"},
      {86'400'000, "1970-01-02T00:00:00.000Z"},
      {1'795'255'205'000, "2026-11-21T10:00:05.000Z"},
      {1'795'255'205'042, "2026-11-21T10:00:05.042Z"},
      {94'694'399'999, "1972-12-31T23:59:59.999Z"},     // end of a leap year
      {951'827'696'789, "2000-02-29T12:34:56.789Z"},    // 2000 is a leap year (÷400)
      {4'107'542'400'000, "2100-03-01T00:00:00.000Z"},  // 2100 is not: Feb 28 -> Mar 1
      {4'107'542'399'999, "2100-02-28T23:59:59.999Z"},
      {253'402'300'799'999, "9999-12-31T23:59:59.999Z"},
      {253'402'300'800'000, "10000-01-01T00:00:00.000Z"},
      {-1, "1969-12-31T23:59:59.999Z"},
      {-86'400'000, "1969-12-31T00:00:00.000Z"},
      {INT64_MAX, "292278994-08-17T07:12:55.807Z"},
      {INT64_MIN, "-292275055-05-16T16:47:04.192Z"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.ms);
    CHECK(rfc3339(c.ms) == c.want);
  }
}

TEST_CASE("json: RFC 3339 walks every day of 1970..2400 consistently") {
  // Independent day-by-day count: the rendered date must advance by exactly
  // one calendar day each step, with month lengths and leap years right.
  int y = 1970, m = 1, d = 1;
  auto month_days = [](int year, int month) {
    static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return month == 2 && leap ? 29 : kDays[month - 1];
  };
  char want[64];
  bool all_ok = true;
  for (int64_t day = 0; y < 2400; ++day) {
    std::snprintf(want, sizeof want, "%04d-%02d-%02dT00:00:00.000Z", y, m, d);
    if (rfc3339(day * 86'400'000) != want) {
      CAPTURE(day);
      CHECK(rfc3339(day * 86'400'000) == want);
      all_ok = false;
      break;
    }
    if (++d > month_days(y, m)) {
      d = 1;
      if (++m > 12) {
        m = 1;
        ++y;
      }
    }
  }
  CHECK(all_ok);
}

TEST_CASE("json: a line sample is cut on a character boundary, escaped, with ... after a cut") {
  auto sample = [](std::string_view line, std::size_t max) {
    std::string out = "<";
    swthrottle::append_line_sample(out, line, max);
    return out;
  };
  CHECK(sample("short", 10) == "<short");
  CHECK(sample("exactly10!", 10) == "<exactly10!");
  CHECK(sample("abcdefghijk", 10) == "<abcdefghij...");
  // "é" is 2 bytes at 4-5: a cut at 5 would split it, so it goes at 4.
  CHECK(sample("abcdé fgh", 5) == "<abcd...");
  CHECK(sample("abcdé fgh", 6) == "<abcdé...");
  CHECK(sample("a\x1b[31mb", 20) == "<a\\u001b[31mb");
}
