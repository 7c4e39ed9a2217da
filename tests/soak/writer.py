#!/usr/bin/env python3
"""Soak writer (tests/soak/soak.sh): appends numbered lines to several log
files at a fixed rate while rotating them, and writes its figures at the end.

    writer.py DIR NFILES SECONDS RATE PID ROTATE_EVERY FIGURES

DIR/app0.log .. app{NFILES-1}.log get, in total, RATE lines a second for
SECONDS seconds, a few lines per write(2) to one file at a time, as a
buffered logger writes. Every line carries a sequence number unique across
all files, and a filler whose length and letter follow from it, so that the
checker can tell a lost, duplicated or garbled line:

    seq=0000001234 f=2 kkkkkkkk...

Every ROTATE_EVERY seconds one file (in turn) is rotated, rename and
copytruncate alternately (so each kind comes every 2 * ROTATE_EVERY s):

- rename + create (logrotate's default): app.log -> app.log.1 (over the
  previous one), and a new app.log. swthrottle's contract (man page,
  --follow) covers a file it has seen at the path; so the writer first waits
  until process PID holds the current file open (in /proc/PID/fd), not until
  it has read it: it may still be reading an older file.
- copytruncate: copy app.log to app.log.1, then truncate app.log. This is
  done under the writer's own lock (it is one thread: nothing is written to
  any file between the copy and the truncation), which closes the window in
  which logrotate itself loses the lines a program writes between its copy
  and its truncate. And lines written before the truncation that the
  follower had not read yet exist only in the copy: that is a documented
  limit of every follower by name (tail -F too), not a loss of swthrottle's.
  So before copying, the writer also waits until PID has read the file to its
  end: the offset of its descriptor on the file (/proc/PID/fdinfo) reached
  the size. What the checker then counts as lost or duplicated is
  swthrottle's alone.

Waits are bounded (30 s); a wait that times out is counted (timeouts= in the
figures) and the rotation is done all the same, so that soak.sh fails
visibly rather than hangs.
"""
import os
import random
import shutil
import sys
import time

WAIT_LIMIT_S = 30.0


def line(seq, k):
    filler = chr(97 + seq % 26) * ((seq * 2654435761) % 61)
    return f"seq={seq:010d} f={k} {filler}\n"


def fds_on(pid, st):
    """The offsets of PID's descriptors open on the file `st` (dev, ino)."""
    out = []
    base = f"/proc/{pid}/fd"
    try:
        names = os.listdir(base)
    except OSError:
        return out
    for name in names:
        try:
            s = os.stat(f"{base}/{name}")
        except OSError:
            continue
        if s.st_ino != st.st_ino or s.st_dev != st.st_dev:
            continue
        try:
            with open(f"/proc/{pid}/fdinfo/{name}") as f:
                for row in f:
                    if row.startswith("pos:"):
                        out.append(int(row.split()[1]))
                        break
        except OSError:
            continue
    return out


def wait_for(cond):
    """Polls cond() until it holds or WAIT_LIMIT_S passed; (held, waited s)."""
    start = time.monotonic()
    while not cond():
        if time.monotonic() - start > WAIT_LIMIT_S:
            return False, time.monotonic() - start
        time.sleep(0.001)  # paces the check only
    return True, time.monotonic() - start


def main():
    d, nfiles, seconds, rate, pid, rotate_every, figures = sys.argv[1:8]
    nfiles, seconds, rate, pid = int(nfiles), float(seconds), int(rate), int(pid)
    rotate_every = float(rotate_every)
    rng = random.Random(20261126)
    paths = [os.path.join(d, f"app{k}.log") for k in range(nfiles)]
    fds = [os.open(p, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644) for p in paths]

    seq = 0
    renames = copytruncates = timeouts = 0
    wait_max = 0.0
    rotations = 0
    start = time.monotonic()
    next_rotation = start + rotate_every
    while True:
        now = time.monotonic()
        if now - start >= seconds:
            break
        due = int(rate * (now - start))
        while seq < due:
            k = rng.randrange(nfiles)
            n = min(1 + rng.randrange(16), due - seq)
            os.write(fds[k], "".join(line(seq + i, k) for i in range(n)).encode())
            seq += n
        if now >= next_rotation:
            k = rotations % nfiles
            st = os.fstat(fds[k])
            if rotations % 2 == 0:
                ok, waited = wait_for(lambda: len(fds_on(pid, st)) > 0)
                os.rename(paths[k], paths[k] + ".1")
                os.close(fds[k])
                fds[k] = os.open(paths[k], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                renames += 1
            else:
                ok, waited = wait_for(lambda: max(fds_on(pid, st), default=-1) >= os.fstat(fds[k]).st_size)
                shutil.copyfile(paths[k], paths[k] + ".1")
                os.truncate(paths[k], 0)
                copytruncates += 1
            timeouts += 0 if ok else 1
            wait_max = max(wait_max, waited)
            rotations += 1
            next_rotation += rotate_every
        time.sleep(0.005)
    elapsed = time.monotonic() - start
    for fd in fds:
        os.close(fd)
    with open(figures, "w") as f:
        f.write(
            f"written={seq} seconds={elapsed:.1f} rate={seq / elapsed:.0f} renames={renames} "
            f"copytruncates={copytruncates} timeouts={timeouts} wait_max_ms={wait_max * 1000:.0f}\n"
        )


if __name__ == "__main__":
    main()
