#!/usr/bin/env python3
"""A paced flood for tests/bench/fleet.sh: one line per key every 50 ms, for SECONDS.

    fleet_pace.py KEYS SECONDS | swthrottle -r rules.toml

Every line matches the keyed rule of fleet.sh's flush measurement (`key=N`, N < KEYS),
so that a `fleet = "batched"` host holds KEYS windows and flushes each of them once per
`sync`, as a live host in a steady flood does. The stamps do not matter (`time = "arrival"`).
"""
import sys
import time


def main():
    keys, seconds, tick = int(sys.argv[1]), float(sys.argv[2]), 0.05
    block = "".join("2026-11-21T10:00:00.000Z ERROR [main] c.e.Worker: request failed key=%d\n" % k
                    for k in range(keys))
    t0 = time.monotonic()
    n = 0
    while True:
        n += 1
        sys.stdout.write(block)
        sys.stdout.flush()
        if n * tick >= seconds:
            break
        delay = t0 + n * tick - time.monotonic()
        if delay > 0:
            time.sleep(delay)


if __name__ == "__main__":
    main()
