#include "delivery/outbox.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <system_error>
#include <utility>

#include "delivery/dead_letter.h"
#include "delivery/outbox_journal.h"
#include "util/atomic_file.h"
#include "util/clock.h"
#include "util/write_all.h"

namespace swthrottle::delivery {
namespace {

// Compaction waits for a journal of at least this size: below it, a rewrite
// saves less than it costs (an fsync of the new file and of the directory).
constexpr uint64_t kCompactMinBytes = 64 * 1024;

// strerror is not thread-safe; this is.
std::string reason(int err) { return std::generic_category().message(err); }

[[noreturn]] void die() {
  ::raise(SIGKILL);
  ::_exit(137);  // not reached: SIGKILL cannot be caught or blocked
}

int open_append(const std::string& path, int extra_flags) {
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | extra_flags, 0600);
}

// The whole file from offset 0, or an errno.
int read_all(int fd, std::string& out) {
  char buf[64 * 1024];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<std::size_t>(n));
    } else if (n == 0) {
      return 0;
    } else if (errno != EINTR) {
      return errno;
    }
  }
}

}  // namespace

// ------------------------------------------------------------ Impl

struct Outbox::Impl {
  using Key = std::pair<std::string, uint32_t>;  // id, destination

  std::string journal_path;
  std::string dead_path;
  OutboxOptions options;

  // |mu| guards everything below, the descriptors' writes included: one
  // writer at a time keeps every journal line whole, and the in-memory state
  // in the order of the file's lines.
  mutable std::mutex mu;
  std::condition_variable room;  // pending got smaller, or closed

  int journal_fd = -1;
  int dead_fd = -1;
  uint64_t journal_bytes = 0;      // the journal's size: what a failed write is cut back to
  uint64_t journal_lines = 0;      // entries in it (lines that were not entries too)
  uint64_t compact_min_lines = 0;  // raised after a failed compaction, so it is not retried at every done()
  bool unsynced = false;           // lines written since the last fsync of the journal
  bool closed = false;
  bool no_wait = false;  // stop_waiting(): add() past the bound, never waits
  bool broken = false;   // a failed write could not be cut back: appending would glue onto half a line
  // Removals the journal could not take (outbox.h); a rewrite records them.
  // The rewrite is tried once at the first such failure, then after every
  // write that succeeds, never again while the disk refuses.
  uint64_t unrecorded = 0;
  bool rewrite_refused = false;

  // Pending records by add order (|seq|); |index| finds them by key.
  uint64_t next_seq = 0;
  uint64_t first_live_seq = 0;  // seqs below are the previous run's (recovered())
  std::map<uint64_t, Delivery> pending;
  std::map<Key, uint64_t> index;

  uint64_t add_writes = 0;   // for options.crash
  uint64_t compactions = 0;  // for options.crash

  OutboxStats stats;
  std::string last_error;

  void fail(const std::string& path, const std::string& what) { last_error = Error{path, 0, 0, what}.str(); }

  // The state change of one entry (replay and live alike). Returns whether it
  // changed anything.
  bool apply(JournalEntry&& e) {
    Key key{e.d.id, e.d.destination};
    auto it = index.find(key);
    switch (e.kind) {
      case EntryKind::Add:
        if (it != index.end()) return false;  // already pending: an add is idempotent
        index.emplace(std::move(key), next_seq);
        pending.emplace(next_seq++, std::move(e.d));
        return true;
      case EntryKind::Done:
        if (it == index.end()) return false;
        pending.erase(it->second);
        index.erase(it);
        return true;
      case EntryKind::Try:
        if (it == index.end()) return false;
        pending[it->second].attempts = e.d.attempts;
        return true;
    }
    return false;
  }

  // Appends `text` (whole lines) to the journal, without an fsync. On a
  // failed write, cuts the file back so that the next line starts on a line
  // of its own; when even that fails, the journal is closed for appending.
  bool append(const std::string& text) {
    if (broken) return false;
    if (int e = write_all(journal_fd, text); e != 0) {
      fail(journal_path, "cannot write: " + reason(e));
      undo();
      return false;
    }
    journal_bytes += text.size();
    unsynced = true;
    rewrite_refused = false;  // the disk takes writes: a rewrite may go through
    return true;
  }

  void say(const std::string& what) const {
    if (options.report) options.report(what);
  }

  // A done entry could not be written: the record stays listed in the
  // journal. Said once per episode; the rewrite that records it is tried.
  void unrecorded_removal() {
    if (unrecorded++ == 0)
      say("delivery: the outbox cannot record that records are done (" + last_error +
          "): they stay listed in it, and a restart would send them again, until it can be rewritten");
  }

  // The journal rewritten with the pending records only, if removals wait
  // for it and the disk may take it now.
  void record_removals() {
    if (unrecorded == 0 || rewrite_refused || broken) return;
    const uint64_t n = unrecorded;
    if (!maybe_compact(true)) {
      rewrite_refused = true;
      return;
    }
    unrecorded = 0;
    say("delivery: the outbox is rewritten: the " + std::to_string(n) + " record" + (n == 1 ? "" : "s") +
        " done meanwhile will not be sent again");
  }

  // The journal was unlinked under us (its directory removed, or the file
  // deleted): what is written to it now would not outlive the run, so it
  // takes nothing more, and says so, instead of promising durability.
  bool removed() {
    struct stat st {};
    if (::fstat(journal_fd, &st) != 0 || st.st_nlink > 0) return false;
    fail(journal_path, "removed while in use (is its directory gone?): records are no longer kept across a restart");
    return true;
  }

  void undo() {
    if (::ftruncate(journal_fd, static_cast<off_t>(journal_bytes)) != 0) {
      broken = true;
      fail(journal_path, "cannot write, nor cut back a partly written entry: " + reason(errno));
    }
  }

  // add()'s write: append() with the phases of options.crash around it.
  bool append_durably(const std::string& text) {
    if (broken) return false;
    if (removed()) return false;
    const bool crash_now = options.crash.phase != CrashPhase::None &&
                           options.crash.phase != CrashPhase::MidCompaction && ++add_writes == options.crash.at;
    if (crash_now && options.crash.phase == CrashPhase::BeforeWrite) die();
    if (crash_now && options.crash.phase == CrashPhase::MidWrite) {
      (void)write_all(journal_fd, std::string_view(text).substr(0, text.size() / 2));
      die();
    }
    if (!append(text)) return false;
    if (crash_now && options.crash.phase == CrashPhase::AfterWrite) die();
    if (::fsync(journal_fd) != 0) {
      // The records are not reported added, so they must not come back
      // after a restart either (they would, as duplicates, only if the cut
      // back is lost: at-least-once still holds).
      fail(journal_path, "cannot fsync: " + reason(errno));
      journal_bytes -= text.size();
      undo();
      return false;
    }
    unsynced = false;
    if (crash_now && options.crash.phase == CrashPhase::AfterFsync) die();
    return true;
  }

  // Appends `d` to the dead-letter file and fsyncs it; only then removes it
  // from the journal, so that a crash in between leaves it in both (sent
  // again after a restart) rather than in neither.
  bool dead_letter(const Delivery& d, const std::string& why, int64_t now_wall_ms) {
    ++stats.dead_letters;
    struct stat st {};
    if (::fstat(dead_fd, &st) != 0) {
      fail(dead_path, "cannot stat: " + reason(errno));
      return false;
    }
    const std::string line = dead_letter_line(d, why, now_wall_ms);
    int e = write_all(dead_fd, line);
    if (e == 0 && ::fsync(dead_fd) != 0) e = errno;
    if (e != 0) {
      fail(dead_path, "cannot write: " + reason(e));
      (void)::ftruncate(dead_fd, st.st_size);  // best effort: a reader skips a line that is not JSON
      return false;                            // still pending: not lost
    }
    remove(d.id, d.destination);
    return true;
  }

  // Writes a done entry and forgets the record (even when the write fails:
  // it is finished either way, and a lost done entry only sends it again
  // after a restart).
  void remove(const std::string& id, uint32_t destination) {
    auto it = index.find(Key{id, destination});
    if (it == index.end()) return;
    const bool recorded = append(done_line(id, destination));
    if (recorded) ++journal_lines;
    pending.erase(it->second);
    index.erase(it);
    room.notify_all();
    if (!recorded) unrecorded_removal();
    record_removals();
    maybe_compact();
  }

  // Rewrites the journal with only the pending adds when most of its lines
  // are done with (and it is big enough to be worth it). Amortized, each line
  // is rewritten O(1) times: the new file has only live lines, so it takes at
  // least as many new lines again before the next rewrite.
  // `force`: whatever its size and lines (a journal of an earlier version,
  // whose lines held URLs; removals to record). Returns whether it rewrote.
  bool maybe_compact(bool force = false) {
    if (broken) return false;
    if (!force) {
      if (journal_bytes < kCompactMinBytes || journal_lines < compact_min_lines) return false;
      const uint64_t obsolete = journal_lines - pending.size();
      if (obsolete * 2 <= journal_lines) return false;
    }
    std::string text;
    for (const auto& [seq, d] : pending) text += add_line(d);
    mode_t mode = 0600;
    if (struct stat st{}; ::fstat(journal_fd, &st) == 0) mode = st.st_mode & 07777;
    if (options.crash.phase == CrashPhase::MidCompaction && ++compactions == options.crash.at) {
      // What replace_file_atomically has done at that moment: the temporary
      // is written and fsync'd, and the rename has not happened.
      const std::string tmp = journal_path + ".tmp." + std::to_string(::getpid());
      int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
      if (fd >= 0) {
        (void)write_all(fd, text);
        (void)::fsync(fd);
      }
      die();
    }
    if (int e = replace_file_atomically(journal_path, text, mode); e != 0) {
      fail(journal_path, "cannot compact: " + reason(e));
      compact_min_lines = journal_lines * 2;
      return false;
    }
    // The new file is in place; our descriptor still writes to the old one.
    const int fd = open_append(journal_path, 0);
    if (fd < 0) {
      broken = true;
      fail(journal_path, "cannot reopen after compaction: " + reason(errno));
      return false;
    }
    ::close(journal_fd);
    journal_fd = fd;
    journal_bytes = text.size();
    journal_lines = pending.size();
    compact_min_lines = 0;
    unsynced = false;  // replace_file_atomically fsync'd the new file whole
    return true;
  }
};

// ------------------------------------------------------------ Outbox

Result<std::unique_ptr<Outbox>> Outbox::open(const std::string& journal_path, const std::string& dead_path,
                                             const OutboxOptions& options) {
  std::unique_ptr<Outbox> box(new Outbox());
  box->impl_ = std::make_unique<Impl>();
  Impl& m = *box->impl_;
  m.journal_path = journal_path;
  m.dead_path = dead_path;
  m.options = options;
  if (m.options.max_pending == 0) m.options.max_pending = 1;

  m.journal_fd = ::open(journal_path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (m.journal_fd < 0) return Error{journal_path, 0, 0, "cannot open: " + reason(errno)};
  std::string text;
  if (int e = read_all(m.journal_fd, text); e != 0) return Error{journal_path, 0, 0, "cannot read: " + reason(e)};

  JournalText journal = read_journal(text);
  for (JournalEntry& e : journal.entries) m.apply(std::move(e));
  m.journal_lines = journal.lines;
  if (journal.keep_bytes < text.size()) {
    // Cut the torn tail off before anything is appended after it.
    if (::ftruncate(m.journal_fd, static_cast<off_t>(journal.keep_bytes)) != 0 || ::fsync(m.journal_fd) != 0)
      return Error{journal_path, 0, 0, "cannot cut off a torn last entry: " + reason(errno)};
  }
  if (journal.skipped > 0) {
    m.fail(journal_path, std::to_string(journal.skipped) +
                             " line(s) that are not journal entries skipped, the first line " +
                             std::to_string(journal.first_skipped_line));
  }
  m.journal_bytes = journal.keep_bytes;
  // A compaction killed before its rename left its temporary behind. One
  // process owns an outbox at a time (the state file's lock), so no live
  // writer's temporary can be removed here.
  remove_stale_temporaries(journal_path);

  m.dead_fd = open_append(dead_path, 0);
  if (m.dead_fd < 0) return Error{dead_path, 0, 0, "cannot open: " + reason(errno)};

  m.first_live_seq = m.next_seq;
  m.stats.recovered = m.pending.size();
  // An earlier version kept the destination's URL in each add ("to"):
  // rewritten at once with labels only, so no secret stays on disk.
  m.maybe_compact(journal.legacy_to);
  return box;
}

Outbox::~Outbox() {
  if (!impl_) return;
  Impl& m = *impl_;
  std::lock_guard lock(m.mu);
  if (m.journal_fd >= 0) {
    if (m.unsynced) (void)::fsync(m.journal_fd);
    ::close(m.journal_fd);
  }
  if (m.dead_fd >= 0) ::close(m.dead_fd);
}

std::vector<Delivery> Outbox::recovered() const {
  Impl& m = *impl_;
  std::lock_guard lock(m.mu);
  std::vector<Delivery> out;
  for (auto it = m.pending.begin(); it != m.pending.end() && it->first < m.first_live_seq; ++it)
    out.push_back(it->second);
  return out;
}

bool Outbox::add(std::span<const Delivery> records) {
  Impl& m = *impl_;
  std::unique_lock lock(m.mu);
  std::vector<const Delivery*> fresh;
  for (;;) {
    if (m.closed) return false;
    // Recomputed after every wait: a record pending when we started may be
    // done now, and is then added again.
    fresh.clear();
    std::set<Impl::Key> in_batch;
    for (const Delivery& d : records) {
      Impl::Key key{d.id, d.destination};
      if (m.index.count(key) != 0 || !in_batch.insert(std::move(key)).second) continue;
      fresh.push_back(&d);
    }
    if (fresh.empty()) return true;
    // A batch larger than the bound goes in whole once nothing else waits:
    // otherwise it could never go in.
    const bool fits = m.pending.empty() || m.pending.size() + fresh.size() <= m.options.max_pending;
    if (fits || m.options.full == OutboxOptions::Full::DropOldest || m.no_wait) break;
    m.room.wait(lock);
  }

  std::string text;
  for (const Delivery* d : fresh) text += add_line(*d);
  if (!m.append_durably(text)) return false;
  const uint64_t batch_seq = m.next_seq;
  for (const Delivery* d : fresh) {
    Delivery copy = *d;
    m.apply(JournalEntry{EntryKind::Add, std::move(copy)});
  }
  m.journal_lines += fresh.size();
  m.stats.added += fresh.size();
  m.record_removals();

  // DropOldest: room is made after the new records are durable, so that a
  // crash in between leaves one record too many, never one too few. Only
  // older records are dropped (a batch larger than the bound stays whole).
  if (m.options.full == OutboxOptions::Full::DropOldest) {
    while (m.pending.size() > m.options.max_pending && m.pending.begin()->first < batch_seq) {
      const Delivery oldest = m.pending.begin()->second;
      if (!m.dead_letter(oldest, "outbox full", system_clock().wall_ms())) break;  // kept: never lost
      ++m.stats.dropped;
    }
  }
  return true;
}

void Outbox::tried(const Delivery& d) {
  Impl& m = *impl_;
  std::lock_guard lock(m.mu);
  auto it = m.index.find(Impl::Key{d.id, d.destination});
  if (it == m.index.end()) return;
  m.pending[it->second].attempts = d.attempts;
  if (m.append(try_line(d))) ++m.journal_lines;
  m.record_removals();
  m.maybe_compact();
}

void Outbox::done(const std::string& id, uint32_t destination) {
  Impl& m = *impl_;
  std::lock_guard lock(m.mu);
  ++m.stats.delivered;
  m.remove(id, destination);
}

void Outbox::dead_letter(const Delivery& d, const std::string& why, int64_t now_wall_ms) {
  Impl& m = *impl_;
  std::lock_guard lock(m.mu);
  m.dead_letter(d, why, now_wall_ms);
}

void Outbox::stop_waiting() {
  Impl& m = *impl_;
  std::lock_guard lock(m.mu);
  m.no_wait = true;
  m.room.notify_all();
}

bool Outbox::holds(const std::string& id, uint32_t destination) const {
  Impl& m = *impl_;
  std::lock_guard lock(m.mu);
  return m.index.count(Impl::Key{id, destination}) != 0;
}

void Outbox::close() {
  Impl& m = *impl_;
  std::lock_guard lock(m.mu);
  m.closed = true;
  m.room.notify_all();
}

OutboxStats Outbox::stats() const {
  Impl& m = *impl_;
  std::lock_guard lock(m.mu);
  OutboxStats s = m.stats;
  s.pending = m.pending.size();
  s.unrecorded = m.unrecorded;
  return s;
}

OutboxStats Outbox::flush() {
  {
    Impl& m = *impl_;
    std::lock_guard lock(m.mu);
    m.rewrite_refused = false;  // one last try
    m.record_removals();
    if (m.unsynced && m.journal_fd >= 0 && ::fsync(m.journal_fd) == 0) m.unsynced = false;
  }
  return stats();
}

std::string Outbox::last_error() const {
  Impl& m = *impl_;
  std::lock_guard lock(m.mu);
  return m.last_error;
}

}  // namespace swthrottle::delivery
