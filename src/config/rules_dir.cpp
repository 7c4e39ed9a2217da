#include "config/rules_dir.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>

namespace swthrottle::config {
namespace {

constexpr std::string_view kSuffix = ".toml";

struct DirCloser {
  void operator()(DIR* d) const { ::closedir(d); }
};

bool is_directory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The rules files of directory `dir`, sorted by name, appended to `out`.
std::optional<Error> add_directory(const std::string& dir, std::vector<std::string>& out) {
  std::unique_ptr<DIR, DirCloser> d(::opendir(dir.c_str()));
  if (!d) return Error{dir, 0, 0, "cannot read rules directory: " + std::string(std::strerror(errno))};
  const std::string prefix = dir.ends_with('/') ? dir : dir + "/";
  std::vector<std::string> names;
  for (;;) {
    errno = 0;  // readdir's end and its failure differ only by errno
    const dirent* e = ::readdir(d.get());
    if (e == nullptr) break;
    if (!is_rules_file_name(e->d_name)) continue;
    std::string path = prefix + e->d_name;
    if (e->d_type == DT_DIR || ((e->d_type == DT_UNKNOWN || e->d_type == DT_LNK) && is_directory(path))) continue;
    names.push_back(std::move(path));
  }
  if (errno != 0) return Error{dir, 0, 0, "cannot read rules directory: " + std::string(std::strerror(errno))};
  if (names.empty()) return Error{dir, 0, 0, "no rules files (*.toml) in this directory"};
  std::sort(names.begin(), names.end());
  out.insert(out.end(), std::make_move_iterator(names.begin()), std::make_move_iterator(names.end()));
  return std::nullopt;
}

}  // namespace

bool is_rules_file_name(std::string_view name) {
  return name.size() > kSuffix.size() && name.ends_with(kSuffix) && !name.starts_with('.');
}

Result<std::vector<std::string>> expand_rules_paths(std::span<const std::string> paths) {
  std::vector<std::string> out;
  for (const std::string& path : paths) {
    if (!is_directory(path)) {
      out.push_back(path);
      continue;
    }
    if (auto e = add_directory(path, out)) return std::move(*e);
  }
  return out;
}

}  // namespace swthrottle::config
