#!/usr/bin/env python3
"""Rotation at a rate (tests/bench/rotation_rate.sh): writes GENERATIONS files
at DIR/app.log, LINES numbered lines each, renaming each one to app.log.1
(over the previous one, which is then gone) INTERVAL_MS after it was
created, without waiting for any reader:

    rotation_writer.py DIR GENERATIONS LINES INTERVAL_MS

Each line: "seq=NNNNNNNNNN gen=G" with a sequence number unique across files.
The time between renames is paced with time.sleep (0: back to back); the
loop's own work adds to it.
"""
import os
import sys
import time


def main():
    d, generations, lines, interval_ms = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    path = os.path.join(d, "app.log")
    seq = 0
    for g in range(generations):
        started = time.monotonic()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.write(fd, "".join(f"seq={seq + i:010d} gen={g}\n" for i in range(lines)).encode())
        os.close(fd)
        seq += lines
        left = interval_ms / 1000 - (time.monotonic() - started)
        if left > 0:
            time.sleep(left)
        os.rename(path, path + ".1")
    # The last file stays at the path.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.write(fd, f"seq={seq:010d} gen=end\n".encode())
    os.close(fd)
    print(seq + 1)


if __name__ == "__main__":
    main()
