#!/usr/bin/env python3
"""A heartbeat log for the absence benchmark (tests/bench/absence.sh).

    gen_heartbeats.py --out FILE [--hosts N] [--minutes M] [--period S] [--stop F] [--noise R] [--seed S]

N hosts (default 100,000) each log `2026-11-21T10:00:00.123Z heartbeat from host-N seq=K` every S
seconds (default 60), from a random phase, for M minutes (default 15); a fraction F of them
(default 0.01) stop halfway, for the absence rule to find. R other lines per heartbeat (default
0.5) are spread in between (`... INFO worker: job done id=K`). Lines are in time order; the same
arguments give the same bytes.
"""
import argparse
import datetime
import random

START = datetime.datetime(2026, 11, 21, 10, 0, 0, tzinfo=datetime.timezone.utc)
START_MS = int(START.timestamp()) * 1000


def stamp(ms):
    t = START + datetime.timedelta(milliseconds=ms - START_MS)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (ms % 1000)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--hosts", type=int, default=100_000)
    p.add_argument("--minutes", type=int, default=15)
    p.add_argument("--period", type=int, default=60)
    p.add_argument("--stop", type=float, default=0.01)
    p.add_argument("--noise", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    rng = random.Random(a.seed)
    end = START_MS + a.minutes * 60_000
    period = a.period * 1000
    events = []
    for h in range(a.hosts):
        t = START_MS + rng.randrange(period)
        stop = START_MS + a.minutes * 30_000 if rng.random() < a.stop else end
        while t < min(stop, end):
            events.append((t, h))
            t += period
    noise = int(len(events) * a.noise)
    for k in range(noise):
        events.append((START_MS + rng.randrange(end - START_MS), -1 - k))
    events.sort()
    with open(a.out, "w") as f:
        seq = 0
        for t, h in events:
            if h >= 0:
                f.write("%s heartbeat from host-%d seq=%d\n" % (stamp(t), h, seq))
                seq += 1
            else:
                f.write("%s INFO worker: job done id=%d\n" % (stamp(t), -1 - h))


if __name__ == "__main__":
    main()
