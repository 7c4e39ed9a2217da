// Fingerprint: the first bytes of a followed file, to tell a file that was
// truncated and has grown back past the read offset (copytruncate between
// two looks) from one that only grew. fail2ban hashes the first line for the
// same reason; we keep the bytes themselves (at most kBytes), no hash.
//
// The file's head only ever grows while it is not truncated: a file shorter
// than kBytes when the fingerprint was taken has its fingerprint extended
// when it has grown, never reported changed for it. A truncated file whose
// new head is byte for byte the old one (the same first kBytes, or the same
// whole content while shorter) cannot be told apart: that is the limit.
//
// Cost: one pread(2) of at most kBytes at offset 0 per check, from the page
// cache, and no allocation. Not thread-safe.
#pragma once

#include <array>
#include <cstddef>

namespace swthrottle::input {

class Fingerprint {
 public:
  static constexpr std::size_t kBytes = 256;

  // Remembers the first bytes the file `fd` has now (none for an empty file,
  // or when it cannot be read: then every check extends it).
  void take(int fd);
  // False when the file no longer begins with the remembered bytes (it is
  // shorter, or they differ): it was truncated. True otherwise, and then the
  // remembered bytes are extended to what the file has now, up to kBytes. A
  // read error says nothing about truncation: true.
  bool same(int fd);

  std::size_t size() const { return size_; }

 private:
  std::array<char, kBytes> bytes_{};
  std::size_t size_ = 0;  // |bytes_| holds the first |size_| bytes of the file
};

}  // namespace swthrottle::input
