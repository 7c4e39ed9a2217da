#!/usr/bin/env python3
"""Rules and grep/rg pattern files for the throughput benchmark (tests/bench/throughput.sh).

    gen_rules.py --rules 8 --toml rules.toml --patterns patterns.txt
    gen_rules.py --rules 8 --client-key --toml rules_keys.toml

The first 8 rules are the alert rules whose lines tests/bench/gen_log.py plants in about
10 % of the log. --rules 32 and 64 add distinct patterns (other literals of the same
shapes) that match rarely: gen_log.py plants each of them in about one line in 100,000.

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


CLIENT_KEY_RULE = ("http-client", r'^(?P<ip>[0-9a-f.:]+) - [^ ]+ \[', "600 per 1m", "{ip}")


def rules_for(count, client_key=False):
    extras = extra_rules()
    if count < len(BASE_RULES) or count > len(BASE_RULES) + len(extras):
        sys.exit("gen_rules.py: --rules must be between %d and %d"
                 % (len(BASE_RULES), len(BASE_RULES) + len(extras)))
    # Take the extras round-robin over the families, so 32 rules are not all "ERROR .*".
    families = [extras[0:16], extras[16:32], extras[32:44], extras[44:52], extras[52:56]]
    picked = []
    while len(picked) < count - len(BASE_RULES):
        for f in families:
            if f and len(picked) < count - len(BASE_RULES):
                picked.append(f.pop(0))
    rules = BASE_RULES + picked
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
    ap.add_argument("--rules", type=int, default=8, help="number of alert rules (8..64)")
    ap.add_argument("--client-key", action="store_true",
                    help="add the keyed rule over HTTP client addresses (keys curve)")
    ap.add_argument("--max-keys", type=int, default=200000, help="settings.max_keys")
    ap.add_argument("--toml", help="write the rules file here")
    ap.add_argument("--patterns", help="write the grep -E / rg pattern file here (one per line)")
    args = ap.parse_args()
    rules = rules_for(args.rules, args.client_key)
    if args.toml:
        with open(args.toml, "w") as f:
            f.write(toml(rules, args.max_keys))
    if args.patterns:
        with open(args.patterns, "w") as f:
            f.write("".join(plain(p) + "\n" for _, p, _, _ in rules))
    if not args.toml and not args.patterns:
        sys.stdout.write(toml(rules, args.max_keys))


if __name__ == "__main__":
    main()
