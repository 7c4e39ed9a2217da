// Small text and file helpers that many tests share: looking for a piece of
// text, splitting and counting lines, reading and appending files.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace swthrottle::test {

bool contains(std::string_view text, std::string_view part);

// How many times `part` occurs in `text`, not overlapping.
std::size_t count_of(std::string_view text, std::string_view part);

// The number of complete lines in `text`: its "\n".
std::size_t count_lines(std::string_view text);

// The lines of `text` without their "\n"; a last line without one is a line too.
std::vector<std::string> lines_of(std::string_view text);

// The whole content of a file; throws std::runtime_error when it cannot be read.
std::string read_file(const std::string& path);

// The whole content of a file, or "" when it is not there (yet): for files a
// child process writes while the test polls them.
std::string read_file_if_exists(const std::string& path);

// Appends data with one write(2), as a logging program does, creating the
// file when it is not there. A failure fails the test (REQUIRE).
void append_file(const std::string& path, std::string_view data);

}  // namespace swthrottle::test
