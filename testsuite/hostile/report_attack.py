#!/usr/bin/python3
"""An attacker and a victim of explschedd, for the hostile_report_*.sh tests. Run as the user
each plays (setpriv); credentials come from libmunge through ctypes (thousands per second,
restricted to $EXPLSCHED_REPORT_UID when set, TTL 60 s, as the real clients make them).

usage: report_attack.py ADDR MUNGE_SOCKET MODE [ARGS]
  victim JOB SECONDS INTERVAL     reports JOB's steps one at a time every INTERVAL s for SECONDS;
                                  prints "victim n=.. p50=.. p95=.. max=.. within1s=.. statuses=.."
  flood JOB RATE SECONDS CONNS    sends RATE reports/s for SECONDS over CONNS pipelined
                                  connections (a pool of real credentials, reused: replays cost the
                                  server a munge check unless it refuses them first), reading
                                  replies on the side; prints "flood sent=.. rate=.. replies=.."
  idle N HOLD                     opens N connections and sends nothing; prints how many were turned
                                  away at once (busy), how many the server closed within HOLD s and
                                  when (median), and how many were still open
  report JOB STEP METRIC          one report; prints the reply line
"""

import collections
import ctypes
import os
import selectors
import socket
import statistics
import sys
import threading
import time

MUNGE_OPT_CIPHER_TYPE = 0
MUNGE_OPT_TTL = 4
MUNGE_OPT_SOCKET = 8
MUNGE_OPT_UID_RESTRICTION = 9


class Munge:
    def __init__(self, socket_path):
        self.lib = ctypes.CDLL("libmunge.so.2")
        self.libc = ctypes.CDLL(None)
        self.lib.munge_ctx_create.restype = ctypes.c_void_p
        self.lib.munge_strerror.restype = ctypes.c_char_p
        self.ctx = ctypes.c_void_p(self.lib.munge_ctx_create())
        self.lib.munge_ctx_set(self.ctx, MUNGE_OPT_SOCKET, ctypes.c_char_p(socket_path.encode()))
        self.lib.munge_ctx_set(self.ctx, MUNGE_OPT_CIPHER_TYPE, ctypes.c_int(0))
        self.lib.munge_ctx_set(self.ctx, MUNGE_OPT_TTL, ctypes.c_int(60))
        uid = os.environ.get("EXPLSCHED_REPORT_UID", "")
        if uid.isdigit():
            self.lib.munge_ctx_set(self.ctx, MUNGE_OPT_UID_RESTRICTION, ctypes.c_uint(int(uid)))

    def encode(self, payload):
        cred = ctypes.c_char_p()
        data = payload.encode()
        err = self.lib.munge_encode(ctypes.byref(cred), self.ctx, data, len(data))
        if err != 0:
            raise RuntimeError("munge_encode: %s" % self.lib.munge_strerror(err).decode())
        text = cred.value.decode()
        self.libc.free(cred)
        return text


def connect(addr, timeout=10):
    host, _, port = addr.rpartition(":")
    s = socket.create_connection((host, int(port)), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def request(munge, job, step, metric):
    text = "EXPLSCHED-REPORT/1 job=%d step=%d metric=%r time=%r" % (job, step, metric, time.time())
    return ("%s cred=%s\n" % (text, munge.encode(text))).encode()


def status_of(reply):
    parts = reply.split(" ")
    status = parts[1] if len(parts) > 1 else "?"
    for p in parts[2:]:
        if p.startswith("code="):
            return status + ":" + p[5:]
    return status


def victim(addr, munge, job, seconds, interval):
    latencies, statuses = [], collections.Counter()
    s = connect(addr)
    f = s.makefile("rb")
    end = time.monotonic() + seconds
    step = int(time.time() * 1000)  # increasing across runs
    while time.monotonic() < end:
        step += 1
        line = request(munge, job, step, 1.0 / step)
        start = time.monotonic()
        try:
            s.sendall(line)
            reply = f.readline().decode("ascii", "replace").strip()
        except OSError:
            reply = ""
        latency = time.monotonic() - start
        if not reply:  # the server closed the connection: reconnect, count the attempt as failed
            statuses["no-reply"] += 1
            latencies.append(float("inf"))
            s.close()
            s = connect(addr)
            f = s.makefile("rb")
            continue
        statuses[status_of(reply)] += 1
        latencies.append(latency if reply.split(" ")[1] in ("stored", "duplicate") else float("inf"))
        time.sleep(max(0.0, interval - latency))
    finite = sorted(latencies)
    n = len(finite)
    within = sum(1 for x in finite if x <= 1.0) / n if n else 0.0

    def pct(p):
        v = finite[min(n - 1, int(p * n))]
        return "inf" if v == float("inf") else "%.4f" % v

    print("victim n=%d p50=%s p95=%s max=%s within1s=%.4f statuses=%s"
          % (n, pct(0.5), pct(0.95), pct(0.999999), within, dict(statuses)), flush=True)


def flood(addr, munge, job, rate, seconds, conns):
    pool = [request(munge, job, 10**9 + k, 1.0) for k in range(1500)]
    socks = [connect(addr) for _ in range(conns)]
    replies = collections.Counter()
    lock = threading.Lock()
    stop = threading.Event()

    def reader(s):
        buf = b""
        s.settimeout(1.0)
        while not stop.is_set():
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                break
            if not chunk:
                break
            buf += chunk
            lines = buf.split(b"\n")
            buf = lines.pop()
            with lock:
                for line in lines:
                    replies[status_of(line.decode("ascii", "replace"))] += 1

    threads = [threading.Thread(target=reader, args=(s,), daemon=True) for s in socks]
    for t in threads:
        t.start()
    sent, k = 0, 0
    start = time.monotonic()
    tick = 0.01
    per_tick = max(1, int(rate * tick))
    while time.monotonic() - start < seconds:
        due = int((time.monotonic() - start) * rate)
        if sent >= due:
            time.sleep(tick / 2)
            continue
        batch = min(per_tick, due - sent)
        s = socks[k % conns]
        k += 1
        payload = b"".join(pool[(sent + i) % len(pool)] for i in range(batch))
        try:
            s.sendall(payload)  # blocks when the server stops reading this connection: fine
        except OSError:
            pass
        sent += batch
    elapsed = time.monotonic() - start
    time.sleep(1.0)
    stop.set()
    for s in socks:
        s.close()
    with lock:
        got = dict(replies)
    print("flood sent=%d seconds=%.1f rate=%.0f/s replies=%s" % (sent, elapsed, sent / elapsed, got), flush=True)


def idle(addr, n, hold):
    socks, refused_connect, born = [], 0, {}
    for _ in range(n):
        try:
            s = connect(addr, timeout=5)
            socks.append(s)
            born[s] = time.monotonic()
        except OSError:
            refused_connect += 1
    opened = time.monotonic()
    sel = selectors.DefaultSelector()
    for s in socks:
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
    busy, closed_at, open_socks = 0, [], set(socks)
    while open_socks and time.monotonic() - opened < hold:
        for key, _ in sel.select(timeout=0.2):
            s = key.fileobj
            try:
                data = s.recv(4096)
            except OSError:
                data = b""
            if data and b"retry code=busy" in data:
                busy += 1
            elif data:
                continue
            # EOF (or a refusal followed by EOF): the server hung up
            sel.unregister(s)
            open_socks.discard(s)
            if not data or b"busy" not in data:
                closed_at.append(time.monotonic() - born[s])  # since this connection opened
    closed_at.sort()
    median = "%.1f" % closed_at[len(closed_at) // 2] if closed_at else "-"
    print("idle asked=%d connect_failed=%d turned_away_busy=%d closed_by_server=%d median_close_s=%s "
          "still_open_after_%ds=%d" % (n, refused_connect, busy, len(closed_at), median, hold, len(open_socks)),
          flush=True)
    for s in socks:
        s.close()


def main():
    addr, munge_socket, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    args = sys.argv[4:]
    if mode == "idle":
        idle(addr, int(args[0]), int(args[1]))
        return
    munge = Munge(munge_socket)
    if mode == "victim":
        victim(addr, munge, int(args[0]), float(args[1]), float(args[2]))
    elif mode == "flood":
        flood(addr, munge, int(args[0]), float(args[1]), float(args[2]), int(args[3]))
    elif mode == "report":
        s = connect(addr)
        s.sendall(request(munge, int(args[0]), int(args[1]), float(args[2])))
        print(s.makefile("rb").readline().decode("ascii", "replace").strip())
    else:
        sys.exit("unknown mode " + mode)


if __name__ == "__main__":
    main()
