// The rules a command line names, loaded into a Generation as main() loads
// the first one, for tests of the App and its parts. A load that fails
// fails the test, with the error.
#pragma once

#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "app/load_generation.h"

namespace swthrottle::test {

inline std::unique_ptr<pipeline::Generation> loaded_generation(const cli::Options& options) {
  auto g = app::load_generation(options);
  REQUIRE_MESSAGE(g.ok(), (g.ok() ? std::string() : g.error().str()));
  return std::move(*g);
}

}  // namespace swthrottle::test
