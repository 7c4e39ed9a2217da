#include "input/mapped_file.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>

namespace swthrottle::input {

namespace {

// The live mappings, for the SIGBUS handler: a fixed table of atomics, since
// a handler may neither lock nor allocate. A file that finds it full is read
// with read(2) instead.
constexpr int kSlots = 1024;

struct Slot {
  std::atomic<bool> used{false};
  std::atomic<uintptr_t> begin{0};  // 0: not yet (or no longer) set
  std::atomic<uintptr_t> end{0};
  std::atomic<bool> truncated{false};
};

Slot g_slots[kSlots];
struct sigaction g_previous {};
uintptr_t g_page = 4096;  // set before the handler is installed (sysconf is not async-signal-safe)
std::once_flag g_installed;

void on_sigbus(int sig, siginfo_t* info, void* context) {
  const auto addr = reinterpret_cast<uintptr_t>(info->si_addr);
  for (Slot& s : g_slots) {
    const uintptr_t b = s.begin.load(std::memory_order_acquire);
    const uintptr_t e = s.end.load(std::memory_order_acquire);
    if (b == 0 || addr < b || addr >= e) continue;
    // The file shrank: zeros from the faulting page to the mapping's end, so
    // that this read and every later one succeed; the reader sees the mark.
    const uintptr_t from = addr & ~(g_page - 1);
    const int saved = errno;
    void* z =
        ::mmap(reinterpret_cast<void*>(from), e - from, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    errno = saved;
    if (z == MAP_FAILED) break;  // cannot mend it: die of the SIGBUS below, as before
    s.truncated.store(true, std::memory_order_release);
    return;
  }
  // Not ours: whoever handled SIGBUS before, or the default death.
  if ((g_previous.sa_flags & SA_SIGINFO) != 0 && g_previous.sa_sigaction != nullptr) {
    g_previous.sa_sigaction(sig, info, context);
    return;
  }
  if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    g_previous.sa_handler(sig);
    return;
  }
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigemptyset(&dfl.sa_mask);
  ::sigaction(SIGBUS, &dfl, nullptr);  // the faulting access runs again, and kills us
}

void install_handler() {
  g_page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  struct sigaction sa {};
  sa.sa_sigaction = on_sigbus;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  ::sigemptyset(&sa.sa_mask);
  ::sigaction(SIGBUS, &sa, &g_previous);
}

int claim_slot(uintptr_t begin, uintptr_t end) {
  for (int i = 0; i < kSlots; ++i) {
    bool expected = false;
    if (!g_slots[i].used.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) continue;
    g_slots[i].truncated.store(false, std::memory_order_relaxed);
    g_slots[i].end.store(end, std::memory_order_release);
    g_slots[i].begin.store(begin, std::memory_order_release);
    return i;
  }
  return -1;
}

}  // namespace

std::unique_ptr<MappedFile> MappedFile::map(int fd, off_t offset, std::size_t length, std::string& why) {
  if (length == 0 || offset < 0) {
    why = "nothing to map";
    return nullptr;
  }
  std::call_once(g_installed, install_handler);  // sets g_page too
  const auto page = static_cast<off_t>(g_page);
  const off_t aligned = offset - offset % page;
  const auto lead = static_cast<std::size_t>(offset - aligned);
  const std::size_t mapped = lead + length;
  void* base = ::mmap(nullptr, mapped, PROT_READ, MAP_PRIVATE, fd, aligned);
  if (base == MAP_FAILED) {
    why = std::strerror(errno);
    return nullptr;
  }
  const auto b = reinterpret_cast<uintptr_t>(base);
  const int slot = claim_slot(b, b + mapped);
  if (slot < 0) {
    ::munmap(base, mapped);
    why = "too many files mapped at once";
    return nullptr;
  }
  // Read front to back, once: the kernel may read ahead and drop behind.
  (void)::madvise(base, mapped, MADV_SEQUENTIAL);
  return std::unique_ptr<MappedFile>(new MappedFile(base, mapped, static_cast<const char*>(base) + lead, length, slot));
}

MappedFile::MappedFile(void* base, std::size_t mapped, const char* data, std::size_t size, int slot)
    : base_(base),
      mapped_(mapped),
      data_(data),
      size_(size),
      slot_(slot),
      truncated_(&g_slots[slot].truncated),
      released_(reinterpret_cast<uintptr_t>(base)) {}

std::size_t MappedFile::released() const {
  const auto data = reinterpret_cast<uintptr_t>(data_);
  return released_ > data ? released_ - data : 0;
}

void MappedFile::release_before(std::size_t end) {
  const uintptr_t to = (reinterpret_cast<uintptr_t>(data_) + std::min(end, size_)) & ~(g_page - 1);
  if (to <= released_) return;
  (void)::madvise(reinterpret_cast<void*>(released_), to - released_, MADV_DONTNEED);
  released_ = to;
}

MappedFile::~MappedFile() {
  Slot& s = g_slots[slot_];
  s.begin.store(0, std::memory_order_release);
  s.end.store(0, std::memory_order_release);
  s.used.store(false, std::memory_order_release);
  ::munmap(base_, mapped_);
}

}  // namespace swthrottle::input
