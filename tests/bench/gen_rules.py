#!/usr/bin/env python3
"""Rules and grep/rg pattern files for the throughput benchmark (tests/bench/throughput.sh).

    gen_rules.py --rules 8 --toml rules.toml --patterns patterns.txt
    gen_rules.py --rules 8 --client-key --toml rules_keys.toml

The first 8 rules are the alert rules whose lines tests/bench/gen_log.py plants in about
10 % of the log. --rules 32 and 64 add distinct patterns (other literals of the same
shapes) that match rarely: gen_log.py plants each of them in about one line in 100,000.
Past 64 (--rules 1000, 88000: tests/bench/rulescale.sh), the rules come from a generated
pack in the style of a shared rule pack (one rule per daemon and message, per vendor
message id, per probed URL, per exception class), whose literals share words with the
log ("sshd[", "kernel: ", "connection refused", "Exception") but whose whole patterns
it does not hold: they cost what a real pack costs on lines it does not describe.

The patterns are written in the subset that RE2, POSIX ERE (GNU grep -E) and Rust regex
(rg) read alike: no \\d, no \\S, no non-greedy or lookaround. The one named capture,
(?P<ip>...), becomes a plain group in the pattern file, so every tool is given the same
language and the counts can be compared.

--client-key adds one more rule, keyed by the client address of every HTTP access line
(key = "{ip}"), for the keys curve: the log's IP pool (gen_log.py --keys K) then decides
how many keys it holds.
"""
import argparse
import re
import sys

# (name, RE2 pattern, threshold, key template or None). Order matters: it is the rule
# file order, and gen_log.py plants lines for these exact texts.
BASE_RULES = [
    ("app-timeout", r"ERROR .* timeout", "20 per 1m", None),
    ("ssh-bruteforce", r"Failed password for .* from (?P<ip>[0-9a-f.:]+)", "5 per 1m", "{ip}"),
    ("jvm-oom", r"OutOfMemoryError", "3 per 5m", None),
    ("http-5xx", r'" 5[0-9][0-9] ', "50 per 1m", None),
    ("disk-full", r"disk full", "1 per 10m", None),
    ("conn-refused", r"Connection refused", "10 per 1m", None),
    ("segfault", r"segfault", "1 per 10m", None),
    ("db-deadlock", r"deadlock detected", "5 per 5m", None),
]

# Literals for the extra rules. Each appears in the log (gen_log.py) but in none of the
# base patterns' lines, so the 8-rule count does not change with them.
EXTRA_ERROR_PHRASES = [
    "checksum mismatch", "lease expired", "quota exceeded", "certificate expired",
    "schema mismatch", "replica lag", "token revoked", "broken pipe",
    "handshake failed", "stale file handle", "queue overflow", "index corrupted",
    "lock wait exceeded", "shard unavailable", "circuit open", "snapshot failed",
]
EXTRA_EXCEPTIONS = [
    "StackOverflowError", "NoClassDefFoundError", "ConcurrentModificationException",
    "ClassCastException", "UnsupportedOperationException", "ArrayIndexOutOfBoundsException",
    "NumberFormatException", "InterruptedException", "ExecutionException",
    "CancellationException", "UncheckedIOException", "DateTimeParseException",
    "InvalidKeyException", "SSLHandshakeException", "ZipException", "EOFException",
]
EXTRA_SSHD_PHRASES = [
    "Did not receive identification string", "Bad protocol version identification",
    "maximum authentication attempts exceeded", "Unable to negotiate with",
    "reverse mapping checking getaddrinfo", "POSSIBLE BREAK-IN ATTEMPT",
    "Corrupted MAC on input", "error: kex_exchange_identification",
    "fatal: Timeout before authentication", "Disconnecting: Too many authentication failures",
    "input_userauth_request: invalid user", "pam_unix(sshd:auth): check pass",
]
EXTRA_KERNEL_PHRASES = [
    "hung_task_timeout_secs", "soft lockup", "Out of memory: Killed process",
    "I/O error, dev", "EXT4-fs error", "nfs: server not responding",
    "watchdog: BUG", "Call Trace",
]
EXTRA_HTTP_PATHS = [
    "/admin/login", "/wp-login.php", "/.env", "/phpmyadmin/",
    "/cgi-bin/luci", "/actuator/env", "/.git/config", "/server-status",
]


def _escape(text):
    # Escape only what is special in all three dialects; re.escape would also escape
    # spaces and ':' etc., which ERE leaves undefined.
    return "".join("\\" + c if c in ".[](){}*+?|^$\\" else c for c in text)


def extra_rules():
    """The 56 extra (name, pattern, threshold, key) rules, in a fixed order."""
    out = []
    for i, p in enumerate(EXTRA_ERROR_PHRASES):
        out.append(("x-error-%02d" % i, "ERROR .* " + p, "5 per 1m", None))
    for i, e in enumerate(EXTRA_EXCEPTIONS):
        out.append(("x-exception-%02d" % i, e, "5 per 1m", None))
    for i, p in enumerate(EXTRA_SSHD_PHRASES):
        out.append(("x-sshd-%02d" % i, r"sshd\[[0-9]+\]: " + _escape(p), "5 per 1m", None))
    for i, p in enumerate(EXTRA_KERNEL_PHRASES):
        out.append(("x-kernel-%02d" % i, "kernel: .*" + _escape(p), "1 per 10m", None))
    for i, p in enumerate(EXTRA_HTTP_PATHS):
        out.append(("x-http-%02d" % i, '"GET ' + _escape(p) + ' HTTP/1\\.[01]" 4[0-9][0-9] ',
                    "10 per 1m", None))
    return out


# The generated pack (rules 65 and up): vocabularies whose combinations give each rule
# distinct literals. Some words are the log's (sshd, kernel, Connection refused), so a
# line often holds an atom of a pack rule without its whole formula.
PACK_PROGRAMS = [
    "sshd", "kernel", "postfix/smtpd", "postfix/qmgr", "dovecot", "named", "nginx", "haproxy",
    "postgres", "mysqld", "redis-server", "kafka", "zookeeper", "containerd", "kubelet", "dockerd",
    "systemd", "CRON", "sudo", "vsftpd", "proftpd", "openvpn", "charon", "slapd", "squid", "clamd",
    "amavis", "spamd", "smartd", "mdadm", "multipathd", "chronyd", "dhcpd", "unbound", "keepalived",
    "corosync", "pacemakerd", "libvirtd", "etcd", "consul",
]
PACK_PHRASES = [
    "authentication failure", "Connection refused", "connection reset by peer", "permission denied",
    "timed out waiting for", "too many open files", "certificate verify failed", "no space left on device",
    "Cannot allocate memory", "invalid user", "access denied for user", "lost connection to",
    "unexpected EOF", "checksum error", "protocol error", "bad signature", "unknown host",
    "login incorrect", "relay access denied", "SASL LOGIN authentication failed", "rejected by policy",
    "failed to start", "main process exited", "watchdog timeout", "restarting after crash",
    "read-only file system", "remote I/O error", "stale NFS file handle", "resource temporarily unavailable",
    "address already in use", "broken pipe", "TLS handshake error", "unsupported protocol version",
    "certificate has expired", "key mismatch", "lease timeout", "leader election lost", "split brain detected",
    "quorum lost", "replication lag exceeded", "disk quota exceeded", "write failed", "fsync failed",
    "corrupted page detected", "deadlock found", "too many connections", "backend not available",
    "upstream timed out", "no live upstreams", "request entity too large", "rate limit exceeded",
    "denied by ACL", "blocked by rule", "virus found", "spam score too high", "DNS lookup failed",
    "SERVFAIL", "zone transfer denied", "clock unsynchronized", "time jump detected",
]
PACK_VENDOR_IDS = [  # (format of a message id, how many ids it has)
    ("%%ASA-[0-9]-%06d: ", 1000000), ("ORA-%05d: ", 100000), ("EventID=%d ", 100000),
    ("MSG_ID %07d ", 10000000), ("AH%05d: ", 100000),
]
PACK_HTTP_DIRS = ["", "admin/", "wp-admin/", "api/v1/", "cgi-bin/", "backup/", "old/", ".well-known/",
                  "static/", "vendor/", "phpmyadmin/", "manager/", "console/", "debug/", "internal/"]
PACK_HTTP_FILES = ["config.php", "setup.php", "shell.jsp", "install.sh", "db.sql", "dump.tar.gz",
                   "credentials.json", "id_rsa", ".htpasswd", "web.config", "xmlrpc.php", "eval-stdin.php",
                   "login.action", "jmx-console", "invoker/readonly", "solr/admin/info", "actuator/heapdump",
                   "server-info", "telescope/requests", "_ignition/execute-solution"]
PACK_JAVA_PACKAGES = ["java.lang", "java.io", "java.net", "java.sql", "java.util", "java.util.concurrent",
                      "javax.net.ssl", "org.hibernate", "org.springframework.dao", "org.apache.kafka.common.errors",
                      "io.netty.handler.codec", "com.fasterxml.jackson.core", "redis.clients.jedis.exceptions"]
PACK_JAVA_CLASSES = ["ConnectException", "SocketTimeoutException", "SQLTransientConnectionException",
                     "IllegalStateException", "TimeoutException", "RejectedExecutionException",
                     "SSLPeerUnverifiedException", "LazyInitializationException", "DataIntegrityViolationException",
                     "RecordTooLargeException", "DecoderException", "JsonParseException", "JedisConnectionException",
                     "BufferOverflowException", "FileSystemException", "NoSuchFileException"]


def _pack_rule(index):
    """Rule `index` (0, 1, ...) of the generated pack: (name, pattern, threshold, key)."""
    family, i = index % 5, index // 5
    if family in (0, 1):  # a daemon's message; the second shape keys by source address
        n = len(PACK_PROGRAMS) * len(PACK_PHRASES)
        round_, j = divmod(i, n)
        prog, phrase = PACK_PROGRAMS[j % len(PACK_PROGRAMS)], PACK_PHRASES[j // len(PACK_PROGRAMS)]
        suffix = " \\(code %d\\)" % round_ if round_ else ""
        if family == 0:
            return ("pack-daemon-%05d" % i, "%s\\[[0-9]+\\]: .*%s%s" % (_escape(prog), _escape(phrase), suffix),
                    "5 per 1m", None)
        return ("pack-source-%05d" % i, "%s: %s%s from (?P<ip>[0-9a-f.:]+)" % (_escape(prog), _escape(phrase), suffix),
                "5 per 10m", "{ip}")
    if family == 2:  # a vendor message id
        fmt_, count = PACK_VENDOR_IDS[i % len(PACK_VENDOR_IDS)]
        n = 104729 * (i // len(PACK_VENDOR_IDS) + 1) % count  # spread over the id space
        return ("pack-vendor-%05d" % i, fmt_ % n, "1 per 10m", None)
    if family == 3:  # a probed URL
        n = len(PACK_HTTP_DIRS) * len(PACK_HTTP_FILES)
        round_, j = divmod(i, n)
        path = "/%s%s%s" % (PACK_HTTP_DIRS[j % len(PACK_HTTP_DIRS)],
                            "v%d/" % round_ if round_ else "", PACK_HTTP_FILES[j // len(PACK_HTTP_DIRS)])
        return ("pack-probe-%05d" % i, '"(GET|POST|HEAD) %s[ ?]' % _escape(path), "10 per 1m", None)
    n = len(PACK_JAVA_PACKAGES) * len(PACK_JAVA_CLASSES)  # an exception class
    round_, j = divmod(i, n)
    cls = PACK_JAVA_CLASSES[j // len(PACK_JAVA_PACKAGES)]
    if round_:
        cls = cls.replace("Exception", "Error%d" % round_) if "Exception" in cls else cls + str(round_)
    return ("pack-exception-%05d" % i, "%s\\.%s" % (_escape(PACK_JAVA_PACKAGES[j % len(PACK_JAVA_PACKAGES)]), cls),
            "3 per 5m", None)


CLIENT_KEY_RULE = ("http-client", r'^(?P<ip>[0-9a-f.:]+) - [^ ]+ \[', "600 per 1m", "{ip}")

# --kind (issue 29): one more rule over every HTTP access line, keyed or counting by
# client address, to weigh a rule of each kind against ordinary rules on the same
# lines: "ordinary" adds one threshold rule keyed by address, "ordinary2" two of them;
# "spike" a `when` with previous() keyed by address; "distinct" the count of distinct
# addresses (past 256 a window: HyperLogLog); "new" first-seen addresses.
ACCESS_LINE = CLIENT_KEY_RULE[1]
KINDS = {
    "ordinary": [('threshold = "600 per 1m"', 'key = "{ip}"')],
    "ordinary2": [('threshold = "600 per 1m"', 'key = "{ip}"'), ('threshold = "900 per 1m"', 'key = "{ip}"')],
    "spike": [('window = "1m"', 'when = "hit >= 3 * previous(hit) and hit >= 600"', 'key = "{ip}"')],
    "distinct": [('threshold = "5000 per 1m"', 'distinct = "{ip}"')],
    "new": [('new = "{ip}"', 'learn = "1m"')],
}
KINDS["all"] = KINDS["spike"] + KINDS["distinct"] + KINDS["new"]  # the -j sanity check of throughput.sh


def kind_toml(kind):
    lines = []
    for i, settings in enumerate(KINDS[kind]):
        lines += ["[[rule]]", 'name = "kind-%s-%d"' % (kind, i), 'kind = "alert"'] + list(settings)
        lines += ["  [[rule.event]]", '  name  = "hit"', "  match = '%s'" % ACCESS_LINE, ""]
    return "\n".join(lines)


MAX_RULES = 200000


def rules_for(count, client_key=False):
    extras = extra_rules()
    if count < len(BASE_RULES) or count > MAX_RULES:
        sys.exit("gen_rules.py: --rules must be between %d and %d" % (len(BASE_RULES), MAX_RULES))
    # Take the extras round-robin over the families, so 32 rules are not all "ERROR .*".
    # (The last family's slice ends at 56: the 64 rules measured so far stay the same.)
    families = [extras[0:16], extras[16:32], extras[32:44], extras[44:52], extras[52:56]]
    used = sum(len(f) for f in families)
    pack = [_pack_rule(i) for i in range(max(0, count - len(BASE_RULES) - used))]
    count = min(count, len(BASE_RULES) + used)
    picked = []
    while len(picked) < count - len(BASE_RULES):
        for f in families:
            if f and len(picked) < count - len(BASE_RULES):
                picked.append(f.pop(0))
    rules = BASE_RULES + picked + pack
    if client_key:
        rules = rules + [CLIENT_KEY_RULE]
    return rules


def plain(pattern):
    """The pattern for grep -E / rg: named groups become plain groups."""
    return re.sub(r"\(\?P<[A-Za-z_][A-Za-z0-9_]*>", "(", pattern)


def toml(rules, max_keys):
    lines = [
        "# Generated by tests/bench/gen_rules.py for tests/bench/throughput.sh.",
        "[settings]",
        'time     = "log"',
        'timezone = "UTC"',
        "year     = 2026",
        "max_keys = %d" % max_keys,
        "",
    ]
    for name, pattern, threshold, key in rules:
        assert "'" not in pattern and "\n" not in pattern
        lines += ["[[rule]]", 'name      = "%s"' % name, 'kind      = "alert"',
                  'threshold = "%s"' % threshold]
        if key:
            lines.append('key       = "%s"' % key)
        lines += ["  [[rule.event]]", '  name  = "hit"', "  match = '%s'" % pattern, ""]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", type=int, default=8, help="number of alert rules (8..%d)" % MAX_RULES)
    ap.add_argument("--client-key", action="store_true",
                    help="add the keyed rule over HTTP client addresses (keys curve)")
    ap.add_argument("--max-keys", type=int, default=200000, help="settings.max_keys")
    ap.add_argument("--kind", choices=sorted(KINDS), help="add the rule(s) of this kind over every access line")
    ap.add_argument("--toml", help="write the rules file here")
    ap.add_argument("--patterns", help="write the grep -E / rg pattern file here (one per line)")
    args = ap.parse_args()
    rules = rules_for(args.rules, args.client_key)
    if args.toml:
        with open(args.toml, "w") as f:
            f.write(toml(rules, args.max_keys))
            if args.kind:
                f.write("\n" + kind_toml(args.kind))
    if args.patterns:
        with open(args.patterns, "w") as f:
            f.write("".join(plain(p) + "\n" for _, p, _, _ in rules))
    if not args.toml and not args.patterns:
        sys.stdout.write(toml(rules, args.max_keys))


if __name__ == "__main__":
    main()
