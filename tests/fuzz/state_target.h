// The state file loader: the text of a --state file through the same steps
// App::start takes (state_codec's from_json, as StateFile::load does, then
// clamp_future and Engine::load_state into the engine of fixed rules,
// fixed_rules.h), then ticks (at the wall clock, and a minute and a day
// after the state's "now"), the end of input and a save. A state that
// loads also saves to a text that loads back to the same text.
//
// Byte 0 picks "now" (the wall clock of the run) and whether max_future is
// on; the rest is the file's text.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "app/load_generation.h"
#include "engine/engine.h"
#include "fuzz/fixed_rules.h"
#include "fuzz/fuzz_check.h"
#include "state/clamp_future.h"
#include "state/state_codec.h"

namespace swthrottle::fuzz {

inline void state_one_input(const uint8_t* data, std::size_t size) {
  if (size < 1) return;
  static constexpr int64_t kNows[] = {1'795'255'200'000, 0, 86'400'000, 4'102'444'800'000};
  const int64_t wall_ms = kNows[data[0] & 3];
  const int64_t max_future_ms = data[0] & 4 ? -1 : 60'000;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);

  auto st = state::from_json(text);
  if (!st.ok()) {
    FUZZ_CHECK(!st.error().what.empty());
    return;
  }
  const std::string saved = state::to_json(*st, wall_ms);
  auto again = state::from_json(saved);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(state::to_json(*again, wall_ms) == saved);

  (void)state::clamp_future(*st, wall_ms, max_future_ms);
  cli::Options o;
  o.rule_files = {fixed_rules_path()};
  auto g = app::load_generation(o);
  FUZZ_CHECK(g.ok());
  engine::Engine& e = *(*g)->engine;
  (void)e.load_state(*st);
  std::vector<engine::Record> out;
  e.tick(wall_ms, out);
  // Time moves on from the state's own "now" (whatever the file says): a
  // minute, then a day, saturating rather than overflowing here.
  const int64_t from = std::max(st->now_ms, wall_ms);
  for (const int64_t step : {int64_t{60'000}, int64_t{86'400'000}})
    e.tick(from > std::numeric_limits<int64_t>::max() - step ? std::numeric_limits<int64_t>::max() : from + step, out);
  e.finish(out);
  (void)state::to_json(e.save_state(), wall_ms);
}

}  // namespace swthrottle::fuzz
