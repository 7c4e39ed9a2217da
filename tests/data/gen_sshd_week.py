#!/usr/bin/env python3
"""Writes examples/sshd/auth-week.log: a week of a bastion host's sshd log
(2026-11-14 to 2026-11-20, syslog stamps, UTC), for the backtest example of
the README and the man page. Deterministic (a fixed seed): running it again
gives the same file.

What is in it, so that choosing "Y per X" is a real question:
  - our own people logging in, now and then after a typo or two;
  - scanners from all over that try one to four passwords and leave;
  - brute-force campaigns from single addresses, slow (2-4 tries a minute)
    to fast (20-40), lasting minutes to an hour;
  - the monitoring host 10.0.0.9 failing its own check (ignored by the rule).

  python3 tests/data/gen_sshd_week.py > examples/sshd/auth-week.log
"""
import datetime
import random

rng = random.Random(20261114)
START = datetime.datetime(2026, 11, 14, 0, 0, 0)
DAYS = 7
HOST = "bastion"
USERS = ["alice", "bob", "deploy", "carol", "dmitri"]
GUESSES = ["root", "admin", "test", "oracle", "ubuntu", "pi", "postgres", "git", "user", "guest", "ftp", "support"]

events = []  # (seconds since START, text)
pid = [4000]


def next_pid():
    pid[0] += rng.randint(1, 9)
    return pid[0]


def ip_public():
    return "%d.%d.%d.%d" % (rng.choice([45, 61, 103, 112, 121, 141, 167, 185, 193, 203, 212, 218]),
                            rng.randint(1, 254), rng.randint(1, 254), rng.randint(1, 254))


def attempt(t, ip, user, invalid):
    p = next_pid()
    port = rng.randint(30000, 65000)
    if invalid:
        events.append((t, "sshd[%d]: Invalid user %s from %s port %d" % (p, user, ip, port)))
        events.append((t + 2, "sshd[%d]: Failed password for invalid user %s from %s port %d ssh2" % (p, user, ip, port)))
        events.append((t + 2, "sshd[%d]: Connection closed by invalid user %s %s port %d [preauth]" % (p, user, ip, port)))
    else:
        events.append((t + 2, "sshd[%d]: Failed password for %s from %s port %d ssh2" % (p, user, ip, port)))
        events.append((t + 3, "sshd[%d]: Connection closed by authenticating user %s %s port %d [preauth]" % (p, user, ip, port)))


span = DAYS * 86400
# Our own logins: about two an hour in the day, fewer at night.
t = 0
while t < span:
    hour = (t // 3600) % 24
    t += rng.expovariate(1.5 / 3600 if 7 <= hour < 20 else 0.3 / 3600)
    user = rng.choice(USERS)
    ip = "198.51.100.%d" % (10 + USERS.index(user))
    p = next_pid()
    port = rng.randint(30000, 65000)
    s = int(t)
    for _ in range(rng.choice([0, 0, 0, 0, 1, 1, 2])):
        events.append((s, "sshd[%d]: Failed password for %s from %s port %d ssh2" % (p, user, ip, port)))
        s += rng.randint(3, 9)
    how = "publickey" if user == "deploy" else "password"
    events.append((s, "sshd[%d]: Accepted %s for %s from %s port %d ssh2" % (p, how, user, ip, port)))
    events.append((s, "sshd[%d]: pam_unix(sshd:session): session opened for user %s(uid=%d) by (uid=0)"
                   % (p, user, 1001 + USERS.index(user))))
    events.append((s + rng.randint(60, 5400), "sshd[%d]: pam_unix(sshd:session): session closed for user %s" % (p, user)))

# Scanners: one to four tries, about two an hour, at any time.
t = 0
while t < span:
    t += rng.expovariate(2.0 / 3600)
    ip = ip_public()
    s = t
    for _ in range(rng.choice([1, 1, 1, 2, 2, 3, 4])):
        attempt(int(s), ip, rng.choice(GUESSES), rng.random() < 0.6)
        s += rng.uniform(2, 20)

# Campaigns: (tries a minute, minutes), each from its own address.
campaigns = [(2, 30), (3, 20), (3, 45), (4, 15), (4, 30), (5, 12), (6, 10), (8, 6), (10, 5), (12, 8),
             (15, 4), (20, 3), (30, 2), (40, 1.5)]
for rate, minutes in campaigns:
    start = rng.uniform(0, span - minutes * 60)
    ip = ip_public()
    s = start
    while s < start + minutes * 60:
        attempt(int(s), ip, rng.choice(GUESSES), rng.random() < 0.7)
        s += rng.expovariate(rate / 60.0)

# The monitoring host's own failing check, every hour (ignored by the rule).
for k in range(0, span, 3600):
    p = next_pid()
    for j in range(3):
        events.append((k + 5 + j, "sshd[%d]: Failed password for nagios from 10.0.0.9 port 41000 ssh2" % p))

events.sort(key=lambda e: e[0])
for s, text in events:
    if s >= span:
        continue
    when = START + datetime.timedelta(seconds=s)
    print("%s %2d %s %s %s" % (when.strftime("%b"), when.day, when.strftime("%H:%M:%S"), HOST, text))
