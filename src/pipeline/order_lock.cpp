#include "pipeline/order_lock.h"

namespace swthrottle::pipeline {

void OrderLock::lock_shared() {
  std::unique_lock lock(mu_);
  readers_cv_.wait(lock, [this] { return !writer_ && asking_ == 0; });
  ++readers_;
}

bool OrderLock::try_lock_shared() {
  std::lock_guard lock(mu_);
  if (writer_ || asking_ != 0) return false;
  ++readers_;
  return true;
}

void OrderLock::unlock_shared() {
  std::lock_guard lock(mu_);
  if (--readers_ == 0) writers_cv_.notify_all();
}

void OrderLock::lock() {
  std::unique_lock lock(mu_);
  writers_cv_.wait(lock, [this] { return !writer_ && readers_ == 0; });
  writer_ = true;
}

bool OrderLock::try_lock() {
  std::lock_guard lock(mu_);
  if (writer_ || readers_ != 0) return false;
  writer_ = true;
  return true;
}

bool OrderLock::try_lock_for(std::chrono::milliseconds within) {
  std::unique_lock lock(mu_);
  ++asking_;
  const bool got = writers_cv_.wait_for(lock, within, [this] { return !writer_ && readers_ == 0; });
  --asking_;
  if (got) writer_ = true;
  else if (asking_ == 0) readers_cv_.notify_all();  // gave up: the readers it held back go on
  return got;
}

void OrderLock::unlock() {
  std::lock_guard lock(mu_);
  writer_ = false;
  readers_cv_.notify_all();
  writers_cv_.notify_all();
}

}  // namespace swthrottle::pipeline
