#!/usr/bin/env python3
"""A deterministic, realistic mixed log for the throughput benchmark (tests/bench/throughput.sh).

    gen_log.py --out FILE [--lines N] [--keys K] [--seed S]

Writes exactly N lines (default 2,000,000) to FILE, the same bytes for the same N, K and S:

- application lines, `2026-11-21T10:00:00.123Z LEVEL [thread] logger: message`
  (INFO / DEBUG / WARN / ERROR), some followed by Java stack traces whose lines carry no
  timestamp (`\\tat com.example...`, `Caused by: ...`, `\\t... 12 more`);
- HTTP access lines in common log format (`[21/Nov/2026:10:00:00 +0000]`);
- sshd and kernel syslog lines (`Nov 21 10:00:00 host sshd[1234]: ...`).

Time starts at 2026-11-21T10:00:00Z and advances about 1 ms per line, in uneven steps;
a few application lines are written up to 20 ms behind (another thread's), and the
syslog and access-log stamps have whole seconds only.

About 10 % of the lines match one of the 8 alert patterns of gen_rules.py. Each of the 56
extra patterns (for 32 and 64 rules) is planted in about 1 line in 100,000. Every client
and sshd source address comes from a pool of K addresses (--keys), drawn from a random
stream of its own: logs with different K differ only in those addresses.
"""
import argparse
import datetime
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_rules  # noqa: E402  (the extra rules' literals, to plant them)

START = datetime.datetime(2026, 11, 21, 10, 0, 0, tzinfo=datetime.timezone.utc)
START_MS = int(START.timestamp()) * 1000

THREADS = ["main", "http-nio-8080-exec-%d", "pool-3-thread-%d", "scheduler-%d", "kafka-consumer-%d",
           "ForkJoinPool.commonPool-worker-%d", "grpc-default-executor-%d"]
LOGGERS = ["c.e.orders.OrderService", "c.e.payment.PaymentGateway", "c.e.inventory.StockClient",
           "c.e.auth.TokenFilter", "o.s.web.servlet.DispatcherServlet", "c.e.search.IndexUpdater",
           "o.h.engine.jdbc.spi.SqlExceptionHelper", "c.e.storage.SegmentWriter",
           "c.e.notify.MailSender", "com.zaxxer.hikari.pool.HikariPool", "c.e.cache.RedisCache",
           "o.a.kafka.clients.consumer.internals.ConsumerCoordinator"]
INFO_MSGS = [
    "order {n} created for customer {c} total={m} EUR",
    "request completed method=GET path=/api/v1/orders/{n} status=200 duration={d}ms",
    "payment {n} authorized in {d} ms",
    "cache hit ratio {p}% over last 60s",
    "user {c} logged in from web client",
    "index batch of {d} documents committed",
    "HikariPool-1 - Pool stats (total=20, active={d}, idle={p}, waiting=0)",
    "scheduled job cleanup-sessions finished, removed {d} sessions",
    "Revoking previously assigned partitions [orders-{d}]",
    "mail queued for customer {c} template=order-confirmation",
]
DEBUG_MSGS = [
    "SELECT o.id, o.status FROM orders o WHERE o.customer_id = {c} took {d} ms",
    "resolved handler for GET /api/v1/stock/{n} in {d} us",
    "token for user {c} valid for {d} s",
    "redis GET order:{n} -> hit",
]
WARN_MSGS = [
    "slow request path=/api/v1/search duration={d}ms",
    "retrying call to inventory-service after timeout (attempt {a}/3)",
    "HikariPool-1 - Thread starvation or clock leap detected (housekeeper delta={d}ms)",
    "disk usage at {p}% on /var/lib/app",
    "Failed to refresh token for user {c}, retrying",
    "connection to redis-1:6379 reset by peer, reconnecting",
    "consumer group rebalance in progress",
]
ERROR_MSGS = [  # none of the 8 patterns
    "payment {n} declined by issuer code=05",
    "validation failed for order {n}: quantity must be positive",
    "could not render template order-confirmation for customer {c}",
    "Request processing failed; nested exception is java.lang.IllegalArgumentException: id={n}",
    "upstream returned 502 for /api/v1/stock/{n}",
]
TIMEOUT_MSGS = [  # "ERROR .* timeout"
    "call to inventory-service failed: read timeout after {d} ms order={n}",
    "payment {n} aborted: gateway timeout",
    "HikariPool-1 - Connection is not available, request timeout after 30000ms.",
    "SMTP send to customer {c} failed: connect timeout",
]
REFUSED_MSGS = [  # "Connection refused"
    "call to inventory-service failed: java.net.ConnectException: Connection refused",
    "redis-1:6379: Connection refused, will retry in {a} s",
    "Connection refused: kafka-2/10.1.4.12:9092",
]
DEADLOCK_MSGS = [  # "deadlock detected"
    "SQL Error: 0, SQLState: 40P01 - ERROR: deadlock detected",
    "order {n} update rolled back: deadlock detected, transaction {c}",
]
DISKFULL_MSGS = [  # "disk full"
    "segment write failed: No space left on device (disk full) path=/var/lib/app/segments/{n}",
    "cannot rotate log file: disk full",
]
EXCEPTIONS = ["java.lang.IllegalStateException: order {n} in unexpected state SHIPPED",
              "java.lang.NullPointerException: Cannot invoke \"Customer.getId()\" because \"c\" is null",
              "org.springframework.dao.DataIntegrityViolationException: could not execute statement",
              "java.io.IOException: Broken pipe (Write failed)",
              "java.net.SocketTimeoutException: Read timed out"]
CAUSES = ["java.sql.SQLException: Lock wait for row {n} was cancelled",
          "java.util.zip.DataFormatException: invalid stored block lengths",
          "java.lang.IllegalArgumentException: negative amount {m}"]
FRAMES = ["com.example.orders.OrderService.place(OrderService.java:{l})",
          "com.example.orders.OrderController.create(OrderController.java:{l})",
          "com.example.payment.PaymentGateway.authorize(PaymentGateway.java:{l})",
          "com.example.inventory.StockClient.reserve(StockClient.java:{l})",
          "org.springframework.web.servlet.FrameworkServlet.service(FrameworkServlet.java:{l})",
          "org.apache.catalina.core.ApplicationFilterChain.doFilter(ApplicationFilterChain.java:{l})",
          "org.hibernate.internal.SessionImpl.flush(SessionImpl.java:{l})",
          "java.base/java.util.concurrent.ThreadPoolExecutor.runWorker(ThreadPoolExecutor.java:1136)",
          "java.base/java.lang.Thread.run(Thread.java:833)",
          "jdk.internal.reflect.GeneratedMethodAccessor{a}.invoke(Unknown Source)"]
PATHS = ["/api/v1/orders/{n}", "/api/v1/stock/{n}", "/api/v1/search?q=item{a}", "/static/app.{a}.js",
         "/healthz", "/api/v1/customers/{c}/orders", "/favicon.ico", "/login"]
AGENTS = ["Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0",
          "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/119.0",
          "curl/7.88.1", "kube-probe/1.28", "okhttp/4.12.0", "python-requests/2.31.0"]
SSHD_OK = ["Accepted publickey for deploy from {ip} port {port} ssh2: ED25519 SHA256:q9f2x{a}",
           "Connection closed by authenticating user root {ip} port {port} [preauth]",
           "Received disconnect from {ip} port {port}:11: Bye Bye [preauth]",
           "Disconnected from invalid user admin {ip} port {port} [preauth]",
           "pam_unix(sshd:session): session opened for user deploy(uid=1000) by (uid=0)",
           "Invalid user oracle from {ip} port {port}"]
SSHD_FAIL = ["Failed password for root from {ip} port {port} ssh2",
             "Failed password for invalid user admin from {ip} port {port} ssh2",
             "Failed password for invalid user test{a} from {ip} port {port} ssh2"]
KERNEL_OK = ["TCP: request_sock_TCP: Possible SYN flooding on port 443. Sending cookies.",
             "audit: type=1400 audit({d}.{a}:{n}): apparmor=\"ALLOWED\" operation=\"open\" profile=\"app\"",
             "IPv4: martian source 10.0.{a}.1 from 10.0.0.{a}, on dev eth0",
             "eth0: renamed from veth{n}"]
SEGFAULT = "{prog}[{pid}]: segfault at {hex} ip 00007f3c2a{hex} sp 00007ffd9c{hex} error 4 in libc.so.6[7f3c2a000000+195000]"
PROGS = ["java", "nginx", "node", "python3", "convert"]


def ip_of(index):
    # A bijection of the pool index onto addresses (the low 24 bits of an odd multiple
    # are distinct for distinct indices below 2^24) that looks like public traffic.
    v = (index * 0x9E3779B1 + 0x5BD1E995) & 0xFFFFFFFF
    return "%d.%d.%d.%d" % (1 + (v >> 24) % 223, (v >> 16) & 255, (v >> 8) & 255, v & 255)


class Clock:
    """Per-second caches of the three stamp formats."""

    def __init__(self):
        self.sec = None

    def set(self, t_ms):
        sec = t_ms // 1000
        if sec != self.sec:
            self.sec = sec
            d = START + datetime.timedelta(milliseconds=sec * 1000 - START_MS)
            self.iso = d.strftime("%Y-%m-%dT%H:%M:%S")
            self.clf = d.strftime("[%d/%b/%Y:%H:%M:%S +0000]")
            self.syslog = "%s %2d %s" % (d.strftime("%b"), d.day, d.strftime("%H:%M:%S"))


def generate(out, lines, keys, seed):
    rng = random.Random(seed)
    ip_rng = random.Random(seed * 1000003 + 17)  # its own stream: K changes only the addresses
    ips = {}

    def ip():
        i = int(ip_rng.random() * keys)
        s = ips.get(i)
        if s is None:
            s = ips[i] = ip_of(i)
        return s

    r = rng.random
    ri = rng.randrange
    choice = rng.choice

    def fill(text):
        if "{" not in text:
            return text
        return text.format(n=ri(10000, 999999), c=ri(1000, 99999), m="%d.%02d" % (ri(1, 2000), ri(100)),
                           d=ri(1, 5000), p=ri(10, 99), a=ri(1, 9), l=ri(20, 900))

    extras_err = gen_rules.EXTRA_ERROR_PHRASES
    extras_exc = gen_rules.EXTRA_EXCEPTIONS
    extras_sshd = gen_rules.EXTRA_SSHD_PHRASES
    extras_kern = gen_rules.EXTRA_KERNEL_PHRASES
    extras_http = gen_rules.EXTRA_HTTP_PATHS
    n_extras = len(extras_err) + len(extras_exc) + len(extras_sshd) + len(extras_kern) + len(extras_http)

    clock = Clock()
    t = START_MS
    buf = []
    written = 0
    steps = (0, 1, 1, 1, 2)

    def app(level, logger, msg, back=0):
        clock.set(t - back)
        th = choice(THREADS)
        if "%d" in th:
            th = th % ri(1, 32)
        return "%s.%03dZ %-5s [%s] %s: %s" % (clock.iso, (t - back) % 1000, level, th, logger, msg)

    def trace(first, cause=None):
        out_lines = [first]
        for _ in range(ri(5, 14)):
            out_lines.append("\tat " + fill(choice(FRAMES)))
        if cause is None and r() < 0.5:
            cause = fill(choice(CAUSES))
        if cause is not None:
            out_lines.append("Caused by: " + cause)
            for _ in range(ri(2, 6)):
                out_lines.append("\tat " + fill(choice(FRAMES)))
            out_lines.append("\t... %d more" % ri(8, 40))
        return out_lines

    def syslog(proc, msg):
        clock.set(t)
        return "%s web-%02d %s: %s" % (clock.syslog, ri(1, 4), proc, msg)

    def access(path=None, status=None):
        clock.set(t)
        if status is None:
            x = r()
            status = 200 if x < 0.79 else 304 if x < 0.85 else 404 if x < 0.88 else choice((500, 502, 503, 504))
        if path is None:
            path = fill(choice(PATHS))
        method = "POST" if r() < 0.15 and path.startswith("/api") else "GET"
        return '%s - - %s "%s %s HTTP/1.1" %d %d "-" "%s"' % (
            ip(), clock.clf, method, path, status, ri(200, 60000), choice(AGENTS))

    while written < lines:
        t += steps[ri(5)]
        x = r()
        if x < 0.00056:  # one of the extra rules' lines
            k = ri(n_extras)
            if k < len(extras_err):
                unit = [app("ERROR", choice(LOGGERS), "operation failed: " + extras_err[k])]
            elif (k := k - len(extras_err)) < len(extras_exc):
                unit = [app("ERROR", choice(LOGGERS), "Unhandled java.util.concurrent." + extras_exc[k])]
            elif (k := k - len(extras_exc)) < len(extras_sshd):
                unit = [syslog("sshd[%d]" % ri(1000, 65000), extras_sshd[k] + " from %s port %d" % (ip(), ri(1024, 65535)))]
            elif (k := k - len(extras_sshd)) < len(extras_kern):
                unit = [syslog("kernel", "[%d.%06d] %s" % (ri(1000, 99999), ri(1000000), extras_kern[k]))]
            else:
                unit = [access(extras_http[k - len(extras_kern)], 404)]
        elif x < 0.30:  # HTTP access, about 10 % of them 5xx
            unit = [access()]
        elif x < 0.345:  # sshd
            if r() < 0.36:
                unit = [syslog("sshd[%d]" % ri(1000, 65000),
                               choice(SSHD_FAIL).format(ip=ip(), port=ri(1024, 65535), a=ri(1, 99)))]
            else:
                unit = [syslog("sshd[%d]" % ri(1000, 65000),
                               choice(SSHD_OK).format(ip=ip(), port=ri(1024, 65535), a=ri(1, 99)))]
        elif x < 0.365:  # kernel
            if r() < 0.3:
                unit = [syslog("kernel", "[%d.%06d] " % (ri(1000, 99999), ri(1000000)) + SEGFAULT.format(
                    prog=choice(PROGS), pid=ri(300, 65000), hex="%06x" % ri(1 << 24)))]
            else:
                unit = [syslog("kernel", "[%d.%06d] " % (ri(1000, 99999), ri(1000000)) + fill(choice(KERNEL_OK)))]
        else:  # application
            back = ri(1, 20) if r() < 0.02 else 0
            y = r()
            if y < 0.55:
                unit = [app("INFO", choice(LOGGERS), fill(choice(INFO_MSGS)), back)]
            elif y < 0.70:
                unit = [app("DEBUG", choice(LOGGERS), fill(choice(DEBUG_MSGS)), back)]
            elif y < 0.80:
                unit = [app("WARN", choice(LOGGERS), fill(choice(WARN_MSGS)), back)]
            elif y < 0.830:
                unit = [app("ERROR", choice(LOGGERS), fill(choice(ERROR_MSGS)), back)]
            elif y < 0.875:
                unit = [app("ERROR", choice(LOGGERS), fill(choice(TIMEOUT_MSGS)), back)]
            elif y < 0.903:
                level = "ERROR" if r() < 0.7 else "WARN"
                unit = [app(level, choice(LOGGERS), fill(choice(REFUSED_MSGS)), back)]
            elif y < 0.918:
                unit = [app("ERROR", "o.h.engine.jdbc.spi.SqlExceptionHelper", fill(choice(DEADLOCK_MSGS)), back)]
            elif y < 0.926:
                unit = [app("ERROR", "c.e.storage.SegmentWriter", fill(choice(DISKFULL_MSGS)), back)]
            elif y < 0.931:  # out of memory, with its trace
                head = app("ERROR", choice(LOGGERS), "Handler dispatch failed", back)
                if r() < 0.5:
                    unit = [head] + trace("java.lang.OutOfMemoryError: Java heap space")
                else:
                    unit = [head] + trace(fill(choice(EXCEPTIONS)), "java.lang.OutOfMemoryError: GC overhead limit exceeded")
            elif y < 0.936:  # refused, in a trace
                head = app("ERROR", choice(LOGGERS), fill("Request processing failed for order {n}"), back)
                unit = [head] + trace("org.springframework.web.client.ResourceAccessException: I/O error on POST request",
                                      "java.net.ConnectException: Connection refused")
            elif y < 0.960:  # any other trace
                head = app("ERROR", choice(LOGGERS), fill("Unexpected error while processing order {n}"), back)
                unit = [head] + trace(fill(choice(EXCEPTIONS)))
            else:
                unit = [app("INFO", choice(LOGGERS), fill(choice(INFO_MSGS)), back)]
        if written + len(unit) > lines:
            unit = unit[:lines - written]
        buf.extend(unit)
        written += len(unit)
        # Lines without a stamp still take time to be written.
        t += len(unit) - 1
        if len(buf) >= 65536:
            buf.append("")
            out.write("\n".join(buf))
            buf = []
    if buf:
        buf.append("")
        out.write("\n".join(buf))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="the log file to write")
    ap.add_argument("--lines", type=int, default=2_000_000, help="number of lines (default 2,000,000)")
    ap.add_argument("--keys", type=int, default=10_000, help="size of the IP address pool (default 10,000)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    args = ap.parse_args()
    if args.lines < 1 or args.keys < 1 or args.keys > 1 << 24:
        sys.exit("gen_log.py: --lines must be >= 1 and --keys in 1..16777216")
    tmp = args.out + ".part"
    # Written under another name and renamed, so an interrupted run never leaves a
    # short log that throughput.sh would reuse.
    with open(tmp, "w", encoding="ascii", newline="\n", buffering=1 << 20) as f:
        generate(f, args.lines, args.keys, args.seed)
    os.replace(tmp, args.out)


if __name__ == "__main__":
    main()
