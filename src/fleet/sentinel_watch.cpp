#include "fleet/sentinel_watch.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <hiredis/hiredis.h>

namespace swthrottle::fleet {

namespace {

constexpr int64_t kPauseFirstMs = 100;
constexpr int64_t kPauseMaxMs = 5'000;
constexpr std::string_view kChannel = "+switch-master";

bool is_text(const redisReply* r, std::string_view s) {
  return r->type == REDIS_REPLY_STRING && std::string_view(r->str, r->len) == s;
}

}  // namespace

SentinelWatch::SentinelWatch(std::vector<Address> sentinels, std::string master, std::chrono::milliseconds timeout,
                             Credentials credentials, const Clock& clock, std::function<void()> moved)
    : sentinels_(std::move(sentinels)),
      master_(std::move(master)),
      timeout_(timeout),
      credentials_(std::move(credentials)),
      clock_(clock),
      moved_(std::move(moved)) {
  if (::pipe2(stop_pipe_, O_CLOEXEC) != 0) stop_pipe_[0] = stop_pipe_[1] = -1;
  thread_ = std::thread([this] { run(); });
}

SentinelWatch::~SentinelWatch() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  if (stop_pipe_[1] >= 0) {
    const char byte = 0;
    while (::write(stop_pipe_[1], &byte, 1) < 0 && errno == EINTR) {
    }
  }
  if (thread_.joinable()) thread_.join();
  for (const int fd : stop_pipe_)
    if (fd >= 0) ::close(fd);
}

bool SentinelWatch::stopping() {
  std::lock_guard lock(mu_);
  return stop_;
}

bool SentinelWatch::subscribe(RedisConnection& c, const Address& sentinel) {
  if (!c.connect(sentinel, 0, timeout_, credentials_)) return false;
  const std::string_view argv[] = {"SUBSCRIBE", kChannel};
  ReplyPtr r = c.command(argv);
  if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 3 || !is_text(r->element[0], "subscribe")) {
    c.close();
    return false;
  }
  subscriptions_.fetch_add(1);
  return true;
}

void SentinelWatch::listen(RedisConnection& c) {
  std::vector<ReplyPtr> pushed;
  // "<name> <old ip> <old port> <new ip> <new port>"
  const std::string ours = master_ + " ";
  while (!stopping()) {
    pollfd fds[2] = {{c.fd(), POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
    if (::poll(fds, stop_pipe_[0] >= 0 ? 2 : 1, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    pushed.clear();
    if (!c.read_pushed(pushed)) return;
    for (const ReplyPtr& m : pushed) {
      if (m->type == REDIS_REPLY_ARRAY && m->elements == 3 && is_text(m->element[0], "message") &&
          is_text(m->element[1], kChannel) && m->element[2]->type == REDIS_REPLY_STRING &&
          std::string_view(m->element[2]->str, m->element[2]->len).starts_with(ours))
        moved_();
    }
  }
}

void SentinelWatch::run() {
  int64_t pause_ms = kPauseFirstMs;
  for (std::size_t i = 0; !stopping(); ++i) {
    RedisConnection c;
    if (subscribe(c, sentinels_[i % sentinels_.size()])) {
      pause_ms = kPauseFirstMs;
      listen(c);
      continue;  // the next sentinel, at once
    }
    if ((i + 1) % sentinels_.size() != 0) continue;
    std::unique_lock lock(mu_);
    if (clock_.wait_for(stop_cv_, lock, pause_ms, [&] { return stop_; })) return;
    pause_ms = std::min(pause_ms * 2, kPauseMaxMs);
  }
}

}  // namespace swthrottle::fleet
