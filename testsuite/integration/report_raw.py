#!/usr/bin/python3
"""Speaks explschedd's wire protocol directly, for the hostile-input parts of
test_report_daemon.sh (the client library refuses bad values itself, so it cannot send them).

usage: report_raw.py HOST:PORT MUNGE_SOCKET MODE [ARGS]
  lines         stdin: one signed text per line ("EXPLSCHED-REPORT/1 job=..."), sent with a real
                credential; "RAW <text>" sends <text> as is. Prints one reply per line.
  bigline N     sends one N-byte line; prints the reply, then "closed" if the server hung up.
  flood N JOB STEP  one connection pipelines N well-formed reports with forged credentials without
                reading replies, while a second connection sends one real report for JOB at STEP; prints
                "latency <seconds> <reply>" for the real one.
  conns N       opens N idle connections at once; prints "busy <count>" (how many were turned
                away with a `retry code=busy` reply).
  killtest JOB FILE   reports JOB's steps 1, 2, ... (real credentials), appending each
                acknowledged step to FILE, until a report fails; prints the last acked step.
"""

import os
import socket
import subprocess
import sys
import threading
import time


def credential(munge_socket, signed):
    # As the real clients do: short-lived, and restricted to explschedd's uid when it is known.
    cmd = ["munge", "--socket", munge_socket, "--cipher", "none", "--ttl", "60"]
    if os.environ.get("EXPLSCHED_REPORT_UID", "").isdigit():
        cmd += ["--restrict-uid", os.environ["EXPLSCHED_REPORT_UID"]]
    done = subprocess.run(cmd, input=signed.encode(), capture_output=True, check=True)
    return done.stdout.decode().strip()


def connect(addr):
    host, _, port = addr.rpartition(":")
    s = socket.create_connection((host, int(port)), timeout=20)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def read_line(f):
    line = f.readline()
    return line.decode("ascii", "replace").rstrip("\n") if line else None


def signed_text(job, step, metric):
    return "EXPLSCHED-REPORT/1 job=%d step=%d metric=%s time=%r" % (job, step, metric, time.time())


def main():
    addr, munge_socket, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    args = sys.argv[4:]
    if mode == "lines":
        s = connect(addr)
        f = s.makefile("rb")
        for text in sys.stdin.read().splitlines():
            if text.startswith("RAW "):
                line = text[4:]
            else:
                line = "%s cred=%s" % (text, credential(munge_socket, text))
            s.sendall((line + "\n").encode())
            print(read_line(f), flush=True)
    elif mode == "bigline":
        s = connect(addr)
        f = s.makefile("rb")
        chunk = b"a" * 65536
        left = int(args[0])
        try:
            while left > 0:
                s.sendall(chunk[:left])
                left -= min(left, len(chunk))
            s.sendall(b"\n")
        except OSError as err:  # the server may hang up before we finish: that is fine
            print("send stopped: %s" % err.__class__.__name__)
        print(read_line(f))
        try:
            print("closed" if read_line(f) is None else "open")
        except OSError:
            print("closed")
    elif mode == "flood":
        n, job, step = int(args[0]), int(args[1]), int(args[2])
        flooder = connect(addr)
        # A real credential with one base64 character changed: well-formed, so munged has to do the
        # full work of decoding it before it finds the MAC wrong.
        text = signed_text(job, 1, 1.0)
        real = credential(munge_socket, text)
        mid = len(real) // 2
        bad = real[:mid] + ("B" if real[mid] != "B" else "C") + real[mid + 1:]
        forged = ("%s cred=%s\n" % (text, bad)).encode()

        def flood():
            try:
                flooder.sendall(forged * n)
            except OSError:
                pass

        t = threading.Thread(target=flood, daemon=True)
        t.start()
        time.sleep(1.0)  # let the flood fill the server's queues first
        s = connect(addr)
        f = s.makefile("rb")
        text = signed_text(job, step, 0.5)
        start = time.time()
        s.sendall(("%s cred=%s\n" % (text, credential(munge_socket, text))).encode())
        reply = read_line(f)
        print("latency %.3f %s" % (time.time() - start, reply), flush=True)
        flooder.close()
    elif mode == "conns":
        socks, busy = [], 0
        for _ in range(int(args[0])):
            socks.append(connect(addr))
        time.sleep(0.5)
        for s in socks:
            s.setblocking(False)
            try:
                data = s.recv(4096)
                if b"retry code=busy" in data:
                    busy += 1
            except BlockingIOError:
                pass
        print("busy %d" % busy)
        for s in socks:
            s.close()
    elif mode == "killtest":
        job, path = int(args[0]), args[1]
        s = connect(addr)
        f = s.makefile("rb")
        last = 0
        with open(path, "a", encoding="ascii") as out:
            for step in range(1, 10**9):
                text = signed_text(job, step, 1.0 / step)
                try:
                    s.sendall(("%s cred=%s\n" % (text, credential(munge_socket, text))).encode())
                    reply = read_line(f)
                except OSError:
                    break
                if reply is None or " stored " not in reply + " ":
                    break
                out.write("%d\n" % step)
                out.flush()
                os.fsync(out.fileno())
                last = step
        print(last)
    else:
        sys.exit("unknown mode " + mode)


if __name__ == "__main__":
    main()
