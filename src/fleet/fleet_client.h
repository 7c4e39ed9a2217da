// FleetClient: the one thread of a process that talks to the fleet's Redis
// (DESIGN.md §8.2, §8.9). Deciders never touch a socket: ask() queues a
// request, the fleet thread sends everything queued as one pipeline, and the
// asker waits for its reply at most `timeout`.
//
// Redis is a FleetServer (fleet_server.h): one server, the primary Sentinel
// names, or a Cluster's primaries. When it cannot be reached (refused, timed
// out, closed, SIGSTOPped, made a replica), the client is degraded: ask()
// answers false at once, without waiting, until the fleet thread has
// connected again (backoff 100 ms doubling to 5 s, 1 s on a cluster, with
// jitter; at once on Sentinel's +switch-master). Entering and leaving that
// state is one stderr line each, and counted: a failover is one such
// episode. After every connect: the scripts are loaded; a server whose
// maxmemory-policy can evict windows is refused (as unreachable) unless
// allow_eviction; a changed run_id (Redis restarted: its windows may be
// gone), a failover (with the counts it may have lost) and evictions are
// reported; the host's clock is compared with Redis's. Evictions are read
// again every 10 s, after every error answer, and at finish().
//
// A request whose asker stopped waiting is not sent if it has not been yet;
// one already sent may still count in Redis while its line was decided
// locally (documented: a throttle errs on the side of counting).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "fleet/fleet_options.h"
#include "fleet/fleet_server.h"
#include "fleet/fleet_stats.h"
#include "fleet/request.h"
#include "util/clock.h"

namespace swthrottle::fleet {

// The batched side (fleet = "batched"): what the fleet thread flushes every
// `sync`, or sooner after flush_soon(). Called on the fleet thread only.
class BatchSource {
 public:
  virtual ~BatchSource() = default;
  // The requests to send now (appended; none is fine).
  virtual void collect(std::vector<Request>& out) = 0;
  // Their replies, in order. answered = false: the connection failed before
  // they were all answered; the source keeps them to send again, unchanged.
  virtual void done(std::span<const Request> sent, std::span<const Reply> replies, bool answered) = 0;
  // Requests that replies asked for (a claim after a flush) wait to be sent,
  // or requests are out whose replies may ask for some.
  virtual bool has_followups() = 0;
};

class FleetClient {
 public:
  using Report = std::function<void(const std::string&)>;  // one stderr line, without "swthrottle: "

  // Connects once before returning (a start with Redis down is degraded, not
  // an error), then starts the fleet thread. Every wait and every time the
  // client reads (the sync interval, reconnect backoff, the server check every
  // 10 s, an asker's timeout, the clock skew check) is `clock`'s, which
  // outlives this: a test's FakeClock drives them without sleeping. The
  // socket timeouts inside hiredis stay real.
  FleetClient(const Clock& clock, FleetClientOptions options, Report report);
  ~FleetClient();  // stop()
  FleetClient(const FleetClient&) = delete;
  FleetClient& operator=(const FleetClient&) = delete;

  // Sends `request` and waits at most the timeout for its reply. False: no
  // usable reply (degraded, timed out, or refused; counted).
  bool ask(const Request& request, Reply& reply);

  // Flushed every `sync` from now on, until removed.
  void add_batch_source(BatchSource* source);
  // No longer flushed; waits for a flush that may be using it to end.
  void remove_batch_source(BatchSource* source);
  // Flush the batch sources now (an early flush), without waiting.
  void flush_soon();
  // Flush them now and wait for it, at most `within` (end of input).
  bool flush_now(std::chrono::milliseconds within);
  // The end of a run: flush_now(within), then the servers' eviction counters
  // read once more, so that --stats counts what a short run had evicted.
  bool finish(std::chrono::milliseconds within);

  // The fleet thread and the server's watchers stop (joined), and pending
  // askers get false; later asks are unanswered. The stats stay readable.
  // Idempotent. The App, never destroyed, calls it at the end of a run: no
  // thread of the fleet may still run while the process exits.
  void stop();
  const FleetStats& stats() const { return stats_; }
  FleetStats& stats() { return stats_; }
  // One line on stderr (for what the rules' side finds, such as log lag).
  void report(const std::string& line) { report_(line); }
  const FleetClientOptions& options() const { return options_; }

 private:
  struct Pending;
  void loop();
  void loop_degraded(int64_t& backoff_ms, std::minstd_rand& jitter);
  bool connect_now();  // on the fleet thread (and in the constructor); false: degrade with connect_error_
  // INFO of the servers: restarts, evictions, clock skew; at a connect, the
  // eviction policy. False: refused, or the connection failed (connect_error_).
  bool check_server(bool first);
  void send(std::vector<std::shared_ptr<Pending>>& batch);
  void go_degraded(const std::string& why);
  void fail_queued();
  void flush_batches();  // on the fleet thread
  void on_timers();      // the server check, the look at replication, a move Sentinel announced

  const Clock& clock_;
  FleetClientOptions options_;
  Report report_;
  FleetStats stats_;

  std::mutex mu_;
  std::condition_variable wake_;  // the fleet thread: work, or stop
  std::condition_variable done_;  // askers: a reply arrived
  std::deque<std::shared_ptr<Pending>> queue_;
  bool stop_ = false;
  std::vector<BatchSource*> sources_;  // guarded by mu_
  bool flush_asked_ = false;           // guarded by mu_
  uint64_t flushes_started_ = 0;       // guarded by mu_
  bool flushing_ = false;              // guarded by mu_: a flush is using the sources
  uint64_t flushes_done_ = 0;          // guarded by mu_
  bool check_asked_ = false;           // guarded by mu_: finish() wants the servers read
  uint64_t checks_done_ = 0;           // guarded by mu_
  bool moved_ = false;                 // guarded by mu_: the servers moved (Sentinel's +switch-master)
  int64_t next_flush_ms_ = 0;          // steady ms of the clock

  // The fleet thread's own (and the constructor's, before it starts).
  std::unique_ptr<FleetServer> server_;  // after mu_ and wake_: its watcher's callback uses them
  std::string connect_error_;
  std::map<std::string, std::string> run_ids_;  // by server
  std::map<std::string, int64_t> evicted_base_;
  uint64_t reloads_seen_ = 0;
  int64_t degraded_since_ms_ = 0;  // steady ms of the clock, as the ones below
  int64_t next_check_ms_ = 0;
  int64_t next_replication_ms_ = 0;
  int64_t last_error_report_ms_ = -1;  // -1: none yet
  std::thread thread_;
};

}  // namespace swthrottle::fleet
