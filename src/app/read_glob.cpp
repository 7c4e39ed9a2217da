// --follow PATTERN (man page: OPTIONS, --follow): every file the pattern
// matches is followed as an input of its own (its own thread and Decider, as
// each file of `--follow a b` is), files that appear later are followed from
// their start, and files that no longer match are let go of once read to
// their end. The pattern's own thread runs the GlobWatcher. Its files are
// metered as the pattern (RunMetrics::adopt).
#include <algorithm>
#include <list>
#include <memory>
#include <string>
#include <thread>

#include "app/app.h"
#include "util/stderr.h"

namespace swthrottle::app {

namespace {

// A change made without inotify (or in a directory the pattern's wildcards
// name) is seen by the next rescan: well within a second of it.
constexpr int kRescanMs = 500;

}  // namespace

void App::read_glob(const InputSpec& in) {
  input::GlobWatcher watcher(in.name);
  {
    std::lock_guard lock(mu_);
    globs_.push_back(&watcher);
    if (stop_) watcher.stop();
  }
  struct File {
    InputSpec spec;
    input::FollowerHandle handle;
    std::thread thread;
  };
  std::list<File> files;  // stable addresses: each thread holds its spec and handle
  auto follow = [&](const std::string& path, bool from_start) {
    File& f = files.emplace_back();
    f.spec.name = path;
    f.spec.follow = true;
    f.spec.from_start = from_start;
    f.spec.handle = &f.handle;
    metrics_.adopt(path, in.name);  // its lines count as the pattern's
    f.thread = std::thread([this, &f] {
      read_input(f.spec);
      f.handle.finished();
    });
  };
  bool first = true;
  while (!watcher.stopped() && !stop_.load(std::memory_order_relaxed)) {
    const input::GlobWatcher::Scan scan = watcher.scan();
    for (const std::string& path : scan.added) {
      // Those found at the start are read as --follow reads a file (from
      // the end unless --from-start); later ones whole, as tail -F reads a
      // file that appears.
      if (!first) print_message("'" + path + "' has appeared (matches '" + in.name + "'); following it");
      follow(path, !first);
    }
    for (const std::string& path : scan.removed) {
      print_message("'" + path + "' no longer matches '" + in.name + "'; it is let go of once read to its end");
      for (File& f : files)
        if (f.spec.name == path && !f.handle.let_go_asked()) f.handle.let_go();
    }
    if (first && files.empty()) print_message("'" + in.name + "' matches no file yet; following files as they appear");
    first = false;
    // The threads of files let go of, once ended.
    for (auto it = files.begin(); it != files.end();) {
      if (!it->handle.done()) {
        ++it;
        continue;
      }
      it->thread.join();
      metrics_.release(it->spec.name);
      it = files.erase(it);
    }
    watcher.wait(kRescanMs);
  }
  // Stopped: each file's Follower was stopped with it (stop_followers).
  // They stay adopted: the run's last figures still count what they said.
  for (File& f : files) f.thread.join();
  std::lock_guard lock(mu_);
  globs_.erase(std::remove(globs_.begin(), globs_.end(), &watcher), globs_.end());
}

}  // namespace swthrottle::app
