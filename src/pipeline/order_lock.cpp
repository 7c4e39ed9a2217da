#include "pipeline/order_lock.h"

namespace swthrottle::pipeline {

void OrderLock::lock_shared() {
  if (asking_.load(std::memory_order_acquire) != 0) {
    // A reader that passed just before the gate closed is waited for like
    // any reader already in.
    std::unique_lock gate(gate_mu_);
    gate_cv_.wait(gate, [this] { return asking_.load(std::memory_order_acquire) == 0; });
  }
  rw_.lock_shared();
}

bool OrderLock::try_lock_shared() {
  if (asking_.load(std::memory_order_acquire) != 0) return false;
  return rw_.try_lock_shared();
}

bool OrderLock::try_lock_for(std::chrono::milliseconds within) {
  asking_.fetch_add(1, std::memory_order_acq_rel);
  const bool got = rw_.try_lock_for(within);
  if (asking_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    // The gate opens: under gate_mu_, so that a reader between its check
    // and its wait is not missed.
    std::lock_guard gate(gate_mu_);
    gate_cv_.notify_all();
  }
  return got;
}

}  // namespace swthrottle::pipeline
