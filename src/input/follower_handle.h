// FollowerHandle: how a thread that does not read a followed file lets go
// of it (Follower::let_go), before or after the reading thread has made its
// Follower. App::read_glob holds one per file a pattern matched; the file's
// reading thread attaches its Follower, detaches it before destroying it,
// and says finished() as its last act.
//
// Thread-safe. Not copyable, not movable (the reading thread holds a pointer).
#pragma once

#include <mutex>

#include "input/follow.h"

namespace swthrottle::input {

class FollowerHandle {
 public:
  FollowerHandle() = default;
  FollowerHandle(const FollowerHandle&) = delete;
  FollowerHandle& operator=(const FollowerHandle&) = delete;

  // The reading thread's Follower; let go at once if let_go() came first.
  void attach(Follower* f) {
    std::lock_guard lock(mu_);
    follower_ = f;
    if (let_go_) f->let_go();
  }
  // Before the Follower is destroyed.
  void detach() {
    std::lock_guard lock(mu_);
    follower_ = nullptr;
  }
  // The reading thread's last act: it may be joined.
  void finished() {
    std::lock_guard lock(mu_);
    follower_ = nullptr;
    done_ = true;
  }
  void let_go() {
    std::lock_guard lock(mu_);
    let_go_ = true;
    if (follower_ != nullptr) follower_->let_go();
  }
  bool let_go_asked() const {
    std::lock_guard lock(mu_);
    return let_go_;
  }
  // The reading thread said finished(): it is ending, and may be joined.
  bool done() const {
    std::lock_guard lock(mu_);
    return done_;
  }

 private:
  mutable std::mutex mu_;
  Follower* follower_ = nullptr;  // guarded by mu_
  bool let_go_ = false;           // guarded by mu_
  bool done_ = false;             // guarded by mu_
};

}  // namespace swthrottle::input
