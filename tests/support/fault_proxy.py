#!/usr/bin/env python3
"""A userspace TCP fault proxy for the fleet tests (this kernel has no netem).

    fault_proxy.py --listen-port-file PATH (--target HOST:PORT | --target-unix PATH) [--exit-on-stdin-eof]

Listens on 127.0.0.1 on two free ports: data and control. Once both listen,
writes "DATA_PORT CONTROL_PORT\\n" to PATH (a temporary file renamed into
place). Every connection to the data port gets its own connection to the
target, and bytes are forwarded both ways in chunks (one read each).

The control port takes one command a line and answers each with "ok\\n" (or
"ok conns=... " for stats) or "err WHY\\n". A mode holds for every
connection, existing and new, until the next mode command:

  pass               forward as is (the start mode; also ends drop-reply).
  delay MS JITTER    hold each chunk, either way, MS +- uniform(JITTER) ms
                     (at least 0); order is kept per direction, so a chunk
                     never passes the one before it.
  blackhole          forward nothing and answer nothing, never close (no FIN,
                     no RST). New connections are accepted and read but
                     never connected to the target. A connection open at any
                     time in blackhole mode STAYS DEAD: after `pass` it still
                     forwards nothing (its stream lost bytes, as a peer whose
                     TCP gave up); only new connections work again.
  reset              close every connection, both sides, with RST (SO_LINGER
                     0). While in force, new connections are accepted and at
                     once closed with RST: connect() succeeds, the first read
                     or write fails with ECONNRESET (or sees EOF).
  drop-reply N       the next N client->server chunks (across connections)
                     are forwarded; from the first of them on, everything the
                     server sends on that connection is swallowed, and once
                     the server answers, the connection is closed both ways
                     with FIN: the request was applied, the reply was lost.
                     The mode goes back to pass once N chunks are counted.
  stats              "ok conns=N bytes_up=N bytes_down=N": connections
                     accepted since start, bytes forwarded to the target and
                     to the clients.

Exits on SIGTERM or SIGINT (and, with --exit-on-stdin-eof, when stdin ends:
the test that started it is gone). Writes nothing but errors, on stderr.
"""
import argparse
import asyncio
import os
import random
import signal
import socket
import struct
import sys

CHUNK = 65536


def set_nodelay(writer):
    sock = writer.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def close_writer(writer, rst):
    if writer is None or writer.transport.is_closing():
        return
    sock = writer.get_extra_info("socket")
    if rst and sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    if rst:
        writer.transport.abort()  # with SO_LINGER 0: an RST, pending data dropped
    else:
        writer.close()


class Conn:
    def __init__(self, proxy, creader, cwriter):
        self.p, self.cr, self.cw = proxy, creader, cwriter
        self.sr = self.sw = None
        self.dead = proxy.mode == "blackhole"  # forwards nothing, ever again
        self.doomed = False  # drop-reply: swallow the replies, close on the first
        self.closed = False
        self.tasks = []

    def close(self, rst=False):
        if self.closed:
            return
        self.closed = True
        close_writer(self.cw, rst)
        close_writer(self.sw, rst)
        for t in self.tasks:
            if t is not asyncio.current_task():
                t.cancel()

    async def run(self):
        if self.p.mode == "reset":
            return self.close(rst=True)
        set_nodelay(self.cw)
        if not self.dead:
            try:
                self.sr, self.sw = await self.p.connect()
            except OSError as e:
                print(f"fault_proxy: connect to target: {e}", file=sys.stderr)
                return self.close(rst=True)
            set_nodelay(self.sw)
        if self.closed:  # reset while connecting
            return self.close(rst=True)
        up, down = asyncio.Queue(), asyncio.Queue()
        self.tasks = [asyncio.ensure_future(c) for c in (self.pump(self.cr, up, True), self.send(up, self.sw, True))]
        if self.sr is not None:
            self.tasks += [asyncio.ensure_future(c) for c in (self.pump(self.sr, down, False), self.send(down, self.cw, False))]
        await asyncio.gather(*self.tasks, return_exceptions=True)
        self.close()

    async def pump(self, reader, queue, up):
        loop = asyncio.get_running_loop()
        while True:
            try:
                data = await reader.read(CHUNK)
            except OSError:
                return self.close(rst=True)  # a reset: pass it on
            if self.dead:
                if not data and up:
                    return self.close()  # the client left; answer nothing until then
                if not data:
                    return  # the target left: say nothing
                continue
            if not data:
                return queue.put_nowait(None)
            if not up and self.doomed:
                return self.close()  # the reply came: the command was applied
            release = loop.time()
            if up and self.p.mode == "drop-reply" and self.p.drop_budget > 0:
                self.p.drop_budget -= 1
                self.doomed = True
                if self.p.drop_budget == 0:
                    self.p.mode = "pass"
            elif self.p.mode == "delay":
                ms, jitter = self.p.delay
                release += max(0.0, ms + random.uniform(-jitter, jitter)) / 1000.0
            queue.put_nowait((release, data))

    async def send(self, queue, writer, up):
        loop = asyncio.get_running_loop()
        while True:
            item = await queue.get()
            if item is None:
                if not self.dead and writer.can_write_eof():
                    try:
                        writer.write_eof()
                    except OSError:
                        pass
                return
            release, data = item
            if release > loop.time():
                await asyncio.sleep(release - loop.time())
            if self.dead or self.closed:
                continue
            if up:  # counted before the write: a client that has its echo sees it in stats
                self.p.bytes_up += len(data)
            else:
                self.p.bytes_down += len(data)
            try:
                writer.write(data)
                await writer.drain()
            except OSError:
                return self.close(rst=True)


class Proxy:
    def __init__(self, args):
        self.args = args
        self.mode = "pass"
        self.delay = (0.0, 0.0)
        self.drop_budget = 0
        self.conns = set()
        self.accepted = self.bytes_up = self.bytes_down = 0

    async def connect(self):
        if self.args.target_unix:
            return await asyncio.open_unix_connection(self.args.target_unix)
        host, _, port = self.args.target.rpartition(":")
        return await asyncio.open_connection(host.strip("[]"), int(port))

    async def on_data(self, reader, writer):
        self.accepted += 1
        conn = Conn(self, reader, writer)
        self.conns.add(conn)
        try:
            await conn.run()
        finally:
            self.conns.discard(conn)

    def command(self, line):
        words = line.split()
        if not words:
            return "err empty command"
        cmd, argv = words[0], words[1:]
        try:
            nums = [int(a) for a in argv]
        except ValueError:
            return f"err {cmd}: arguments must be integers"
        want = {"pass": 0, "delay": 2, "blackhole": 0, "reset": 0, "drop-reply": 1, "stats": 0}
        if cmd not in want:
            return f"err unknown command {cmd}"
        if len(nums) != want[cmd] or any(n < 0 for n in nums) or (cmd == "drop-reply" and nums[0] < 1):
            return f"err usage: {cmd}" + {"delay": " MS JITTER_MS", "drop-reply": " N (>= 1)"}.get(cmd, "")
        if cmd == "stats":
            return f"ok conns={self.accepted} bytes_up={self.bytes_up} bytes_down={self.bytes_down}"
        self.mode, self.drop_budget = cmd, 0
        if cmd == "delay":
            self.delay = (float(nums[0]), float(nums[1]))
        elif cmd == "drop-reply":
            self.drop_budget = nums[0]
        elif cmd == "blackhole":
            for c in self.conns:
                c.dead = True
        elif cmd == "reset":
            for c in list(self.conns):
                c.close(rst=True)
        return "ok"

    async def on_control(self, reader, writer):
        try:
            while line := await reader.readline():
                writer.write((self.command(line.decode(errors="replace")) + "\n").encode())
                await writer.drain()
        except OSError:
            pass
        finally:
            writer.close()


async def main():
    ap = argparse.ArgumentParser(description="TCP fault proxy for tests")
    ap.add_argument("--listen-port-file", required=True)
    target = ap.add_mutually_exclusive_group(required=True)
    target.add_argument("--target", help="HOST:PORT")
    target.add_argument("--target-unix", help="PATH")
    ap.add_argument("--exit-on-stdin-eof", action="store_true")
    args = ap.parse_args()
    if args.target and ":" not in args.target:
        ap.error("--target wants HOST:PORT")
    proxy = Proxy(args)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    if args.exit_on_stdin_eof:
        loop.add_reader(0, lambda: None if os.read(0, 4096) else stop.set())
    data = await asyncio.start_server(proxy.on_data, "127.0.0.1", 0)
    control = await asyncio.start_server(proxy.on_control, "127.0.0.1", 0)
    ports = f"{data.sockets[0].getsockname()[1]} {control.sockets[0].getsockname()[1]}\n"
    tmp = args.listen_port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(ports)
    os.replace(tmp, args.listen_port_file)
    await stop.wait()
    os._exit(0)  # at once: no waiting on open connections


if __name__ == "__main__":
    asyncio.run(main())
