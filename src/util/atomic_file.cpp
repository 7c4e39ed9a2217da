#include "util/atomic_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "util/write_all.h"

namespace swthrottle {
namespace {

std::string dir_of(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string base_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string temporary_of(const std::string& path) { return path + ".tmp." + std::to_string(::getpid()); }

// Writes, fsyncs and closes `tmp`. Returns 0 or an errno; on failure a file
// we created is removed again. O_EXCL|O_NOFOLLOW: a symlink planted at the
// temporary name (in a shared directory) is removed, never written through.
int write_temporary(const std::string& tmp, std::string_view contents, mode_t mode) {
  const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  int fd = ::open(tmp.c_str(), flags, 0600);
  if (fd < 0 && errno == EEXIST) {
    // Writers take turns (see the file comment): it is left over from a killed one.
    if (::unlink(tmp.c_str()) != 0) return errno;
    fd = ::open(tmp.c_str(), flags, 0600);
  }
  if (fd < 0) return errno;
  auto fail = [&](int e) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return e;
  };
  if (mode != 0600) (void)::fchmod(fd, mode);  // best effort: the content matters more
  if (int e = write_all(fd, contents); e != 0) return fail(e);
  if (::fsync(fd) != 0) return fail(errno);
  if (::close(fd) != 0 && errno != EINTR) {
    int e = errno;
    ::unlink(tmp.c_str());
    return e;
  }
  return 0;
}

}  // namespace

int replace_file_atomically(const std::string& path, std::string_view contents, mode_t mode) {
  const std::string tmp = temporary_of(path);
  if (int e = write_temporary(tmp, contents, mode); e != 0) return e;
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    return e;
  }
  // Makes the rename itself durable. Its failure is not reported: the new
  // file is already in place, and after a power loss the directory holds the
  // old file or the new one, either of them whole.
  int dfd = ::open(dir_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
  return 0;
}

void remove_stale_temporaries(const std::string& path) {
  const std::string dir = dir_of(path);
  const std::string prefix = base_of(path) + ".tmp.";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  while (const dirent* ent = ::readdir(d)) {
    std::string_view name(ent->d_name);
    if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix) continue;
    std::string_view pid = name.substr(prefix.size());
    if (pid.find_first_not_of("0123456789") != std::string_view::npos) continue;
    (void)::unlinkat(::dirfd(d), ent->d_name, 0);  // a directory of that name stays
  }
  ::closedir(d);
}

}  // namespace swthrottle
