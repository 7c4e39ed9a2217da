// Replacing a file whole: a reader (or a crash at any moment: SIGKILL, power
// loss) sees the old content or the new one, never a mix or a truncation.
//
// The protocol: write PATH.tmp.<pid>, fsync it, rename it over PATH, fsync
// the directory. The temporary name is per process, so writers of one path
// within a process must take turns, and writers in different processes must
// hold a lock of their own (the state file uses flock on PATH.lock): the
// temporary of another live writer would otherwise be removed under it.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

namespace swthrottle {

// Replaces the file at `path` with `contents`, created with permission bits
// `mode` (applied with fchmod, so the umask does not narrow them; best
// effort). Returns 0, or the errno of the step that failed: then `path` is
// untouched and the temporary file is gone. A leftover temporary of the same
// name (from a killed writer with our pid) is removed first; a symlink planted
// there is removed, never written through. The final directory fsync is best
// effort: once the rename is done, the new file is in place.
int replace_file_atomically(const std::string& path, std::string_view contents, mode_t mode);

// Removes the PATH.tmp.<digits> files that killed writers left next to
// `path` (a directory of that name stays). Call it under the writers' lock.
void remove_stale_temporaries(const std::string& path);

}  // namespace swthrottle
