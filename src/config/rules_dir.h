// The rules files the command line's -r arguments name (DESIGN.md §6, man
// page: OPTIONS, -r): a file stands for itself, a directory for the *.toml
// files in it, in name order, as fail2ban's jail.d and sudoers.d are read.
//
// Expanded at every load, so a SIGHUP reload sees the files added to a
// directory and no longer reads the ones removed.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace swthrottle::config {

// Is `name` (a directory entry) a rules file of a rules directory? It ends
// in ".toml", has something before that, and does not start with "." (an
// editor's lock or swap file, a hidden file). Leaves out "a.toml~",
// "a.toml.dpkg-old" and "a.toml.off".
bool is_rules_file_name(std::string_view name);

// The paths, each directory replaced by its rules files (DIR/NAME, sorted by
// name, byte by byte as in the C locale). Entries that are directories are
// left out; anything else named NAME.toml is kept (a dangling symlink then
// fails to open, with its name). A path that is not a directory is kept as
// given, without looking at it: reading it says what is wrong. Errors: a
// directory that cannot be read, or that holds no rules file, `DIR: no rules
// files (*.toml) in this directory` (an empty directory is a mistake
// somewhere, not "no rules": a run with no rules is refused anyway).
Result<std::vector<std::string>> expand_rules_paths(std::span<const std::string> paths);

}  // namespace swthrottle::config
