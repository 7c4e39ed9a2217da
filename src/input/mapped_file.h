// MappedFile: a regular file read through mmap(2) instead of read(2), so
// that a replay's bytes go from the page cache to the matcher without a copy
// (the copy was an eighth of a -j 1 run).
//
// A mapped file can shrink under us: touching a page past its new end
// raises SIGBUS. A process-wide SIGBUS handler knows every live mapping; a
// fault inside one maps zero pages over the rest of it (so the access that
// faulted, and every later one, reads zeros instead of killing the run)
// and marks the mapping truncated(). The reader checks truncated() and
// ends the input with an error, as a read error would: nothing is lost
// silently. A fault anywhere else goes to the handler that was there
// before, or kills the process as SIGBUS always did.
//
// Only for inputs named on the command line and read to their end (not
// followed files: those use read(2), whose offsets survive rotation).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace swthrottle::input {

class MappedFile {
 public:
  // Maps [offset, offset + length) of `fd` read-only (offset need not be
  // page-aligned). nullptr, with the reason in `why`, when it cannot.
  static std::unique_ptr<MappedFile> map(int fd, off_t offset, std::size_t length, std::string& why);

  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  const char* data() const { return data_; }
  std::size_t size() const { return size_; }
  // Gives back the pages wholly before data() + end that were not given back
  // yet (madvise MADV_DONTNEED): the RSS of a long replay stays bounded, as
  // with read(2). The addresses stay valid: a later read of them faults the
  // page in from the page cache again.
  void release_before(std::size_t end);
  // How many bytes from data() on have been given back.
  std::size_t released() const;

  // A page past the file's end was touched: the file shrank while mapped,
  // and what was read of it from that page on is zeros.
  bool truncated() const { return truncated_->load(std::memory_order_acquire); }

 private:
  MappedFile(void* base, std::size_t mapped, const char* data, std::size_t size, int slot);

  void* base_;          // page-aligned start of the mapping
  std::size_t mapped_;  // its length
  const char* data_;    // the first byte asked for
  std::size_t size_;
  int slot_;  // its entry in the SIGBUS handler's table
  const std::atomic<bool>* truncated_;
  uintptr_t released_;  // pages below this address were given back  // that entry's mark (asked once a line: inline)
};

}  // namespace swthrottle::input
