// state_checksum.h: a --state file ends with the XXH3 checksum of what comes
// before it; a changed byte, a reformatted file or a moved checksum is
// damage, a file without one (from before it existed) is not.
#include "state/state_checksum.h"

#include <doctest/doctest.h>

#include <string>

namespace {

using swthrottle::state::check_seal;
using swthrottle::state::Seal;
using swthrottle::state::seal;

const std::string kText =
    "{\"swthrottle_state\":1,\"now_ms\":5000,\"last_log_ms\":-1,\"rules\":[\n"
    "{\"rule\":\"r\",\"fingerprint\":\"f\",\"windows\":[\n"
    "{\"key\":\"a\\\"checksum\\\":1\",\"now_ms\":5000,\"alert_suppressed\":2}]}]}\n";

}  // namespace

TEST_CASE("state checksum: sealed text checks out, and it is the text with one more member, last") {
  const std::string sealed = seal(kText);
  CHECK(sealed.starts_with(kText.substr(0, kText.size() - 2)));
  CHECK(sealed.find(",\n\"checksum\":\"xxh3-64:") == kText.size() - 2);
  CHECK(sealed.ends_with("\"}\n"));
  CHECK(sealed.size() == kText.size() + 39);  // ",\n\"checksum\":\"xxh3-64:" 16 digits "\"}\n", for "}\n"
  CHECK(check_seal(sealed).seal == Seal::Good);
  // The same text gives the same checksum; another text another.
  CHECK(seal(kText) == sealed);
  CHECK(seal(kText + " ") != sealed);
}

TEST_CASE("state checksum: one changed digit, anywhere, is damage") {
  const std::string sealed = seal(kText);
  // alert_suppressed 2 -> 3: a plausible value, which no range check can refuse.
  std::string changed = sealed;
  changed[changed.find("\"alert_suppressed\":2") + 19] = '3';
  const auto c = check_seal(changed);
  CHECK(c.seal == Seal::Bad);
  CHECK(c.why.starts_with("its content does not match its checksum (xxh3-64 "));
  CHECK(c.why.ends_with("): it was changed after it was saved"));
  // Each byte of the content, and each digit of the checksum itself.
  for (std::size_t i = 0; i < sealed.size(); ++i) {
    std::string one = sealed;
    one[i] = one[i] == '0' ? '1' : '0';
    CAPTURE(i);
    CHECK(check_seal(one).seal == Seal::Bad);
  }
  std::string upper = sealed;
  upper[upper.size() - 4] = 'G';
  CHECK(check_seal(upper).why == "its checksum is not 16 hex digits");
}

TEST_CASE("state checksum: no checksum is an older file, a checksum not as written is damage") {
  CHECK(check_seal(kText).seal == Seal::Missing);  // a key holding "checksum" is no member
  CHECK(check_seal("").seal == Seal::Missing);
  // Reformatted (jq .): the member is there, but not where swthrottle writes it.
  std::string spaced = seal(kText);
  spaced.replace(spaced.find("\"checksum\":"), 11, "\"checksum\" : ");
  CHECK(check_seal(spaced).seal == Seal::Bad);
  std::string moved = kText;
  moved.replace(1, 0, "\"checksum\":\"xxh3-64:0000000000000000\",");
  const auto m = check_seal(moved);
  CHECK(m.seal == Seal::Bad);
  CHECK(m.why == "its \"checksum\" member is not the last line swthrottle writes (edited or reformatted?)");
  // A cut file loses its checksum with its end: damage, but the JSON reader says so (unexpected end).
  CHECK(check_seal(seal(kText).substr(0, 40)).seal == Seal::Missing);
}
