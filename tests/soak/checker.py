#!/usr/bin/env python3
"""Soak checker (tests/soak/soak.sh): reads swthrottle's standard output and
counts every numbered line of tests/soak/writer.py it holds.

    checker.py PROGRESS RESULT

Reads standard input to its end. Every second it writes the number of
numbered lines received so far to PROGRESS (soak.sh waits on it); at the end
it writes to RESULT:

    received=N distinct=N duplicated=N garbled=N out_of_order=N records=N max_seq=N

duplicated: lines received more than once (each extra copy counts);
garbled: a line that starts like a numbered line but is not one the writer
wrote (two lines' bytes run together, a cut line); out_of_order: a line of
one file that came after a line of the same file with a higher number;
records: the other lines (alert records of the soak's alert rule).
Lost lines are those written but not distinct: soak.sh works that out with
the writer's count.
"""
import sys
import time


def main():
    progress, result = sys.argv[1:3]
    seen = bytearray(1 << 20)
    received = duplicated = garbled = out_of_order = records = 0
    max_seq = -1
    last = {}
    next_report = time.monotonic() + 1.0
    for raw in sys.stdin.buffer:
        if not raw.startswith(b"seq="):
            records += 1
            continue
        try:
            seq = int(raw[4:14])
            k = int(raw[17:raw.index(b" ", 17)])
        except ValueError:
            garbled += 1
            continue
        want_len = (seq * 2654435761) % 61
        end = raw.index(b" ", 17) + 1
        body = raw[end:-1] if raw.endswith(b"\n") else raw[end:]
        if raw[3:4] != b"=" or len(body) != want_len or (want_len and body != bytes([97 + seq % 26]) * want_len):
            garbled += 1
            continue
        received += 1
        if seq >= len(seen):
            seen.extend(bytearray(max(seq + 1 - len(seen), len(seen))))
        if seen[seq]:
            duplicated += 1
        seen[seq] = 1
        if seq < last.get(k, -1):
            out_of_order += 1
        last[k] = seq
        max_seq = max(max_seq, seq)
        now = time.monotonic()
        if now >= next_report:
            with open(progress, "w") as f:
                f.write(f"{received}\n")
            next_report = now + 1.0
    with open(progress, "w") as f:
        f.write(f"{received}\n")
    distinct = received - duplicated
    with open(result, "w") as f:
        f.write(
            f"received={received} distinct={distinct} duplicated={duplicated} garbled={garbled} "
            f"out_of_order={out_of_order} records={records} max_seq={max_seq}\n"
        )


if __name__ == "__main__":
    main()
