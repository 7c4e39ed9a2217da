#!/usr/bin/env python3
"""The benchmark log (gen_log.py) as JSON lines, for tests/bench/json.sh.

Each text line becomes one object: {"ts": STAMP, "level": LEVEL, "msg": REST}
when it starts with an RFC 3339 stamp and a level, {"ts": STAMP, "msg": REST}
when it has a stamp only, and {"msg": LINE} otherwise (the lines of a stack
trace). Keys come in a fixed order so that the benchmark measures reading
fields, not the generator.

    gen_json_log.py TEXT_LOG > JSON_LOG
"""
import json
import re
import sys

STAMP = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z) (?:(TRACE|DEBUG|INFO|WARN|ERROR|FATAL) +)?(.*)$")


def main():
    out = sys.stdout
    with open(sys.argv[1], encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            line = line.rstrip("\n")
            m = STAMP.match(line)
            if m is None:
                obj = {"msg": line}
            elif m.group(2):
                obj = {"ts": m.group(1), "level": m.group(2), "msg": m.group(3)}
            else:
                obj = {"ts": m.group(1), "msg": m.group(3)}
            out.write(json.dumps(obj, ensure_ascii=True, separators=(",", ":")))
            out.write("\n")


if __name__ == "__main__":
    main()
