"""ExplSched report client for Python training code (standard library only).

Report the learning curve of a Slurm job submitted with ``sbatch --explore=GROUP`` so that
ExplSched can rank, preempt or stop the trial::

    import explsched
    for step, batch in enumerate(loader):
        loss = train_step(batch)
        if step % 100 == 0:
            explsched.report(step, loss.item(), throughput=steps_per_second)

Each report is signed with a munge credential of the calling user (obtained by running the
``munge`` command) and acknowledged by explschedd only after it is committed to its database.
The job id comes from ``EXPLSCHED_JOB_ID`` (else ``SLURM_JOB_ID``), the address from
``EXPLSCHED_REPORT_ADDR`` (set by the ExplSched SPANK plugin in every step of an --explore job),
the munge socket from ``EXPLSCHED_MUNGE_SOCKET``; otherwise from the settings file
(``EXPLSCHED_CONF``, default /etc/slurm/explschedd.conf). The wire format is the one of
src/core/report/report_wire.hpp.

``report()`` never raises into the training loop by default: when explschedd is down, slow or
busy it retries with backoff for at most ``timeout`` seconds (default 5, or
``EXPLSCHED_REPORT_TIMEOUT``), then drops the point,
warns once per process (``warnings.warn``) and returns ``"dropped"``; for a while after a failure
(backoff growing to a minute) further points are dropped at once, so a dead server costs the
loop nothing. A refusal returns ``"refused"`` (warned once as well). It returns ``"stored"`` or
``"duplicate"`` (the step was already stored with this value: harmless after a retry) when
explschedd acknowledged the point.

``report(..., strict=True)`` (or ``Reporter(strict=True)``) raises instead, as version 0.x did:

* ``ReportRefused`` -- refused for good (``.code`` says why, e.g. ``step_behind``, ``forbidden``,
  ``invalid_value``, ``too_many_points``; ``.last_step`` is the job's last stored step after
  ``step_behind``: resume reporting after it);
* ``ReportRetry`` -- explschedd could not decide now (``busy``, ``rate_limited``,
  ``unavailable``); the same call may be repeated later;
* ``ReportError`` -- the base class; raised as such for local failures (no connection, munge).

Credentials are restricted to explschedd's uid (``EXPLSCHED_REPORT_UID``, which the SPANK plugin
sets next to ``EXPLSCHED_REPORT_ADDR``) and live ``CRED_TTL`` seconds, so a credential seen on the
network is useless to anyone else and soon to everyone.
"""

import math
import os
import socket
import subprocess
import threading
import time
import warnings

__all__ = ["report", "job_id", "Reporter", "ReportError", "ReportRefused", "ReportRetry"]

PROTOCOL = 1
REQUEST_TAG = "EXPLSCHED-REPORT/%d" % PROTOCOL
REPLY_TAG = "EXPLSCHED-REPLY/%d" % PROTOCOL
MAX_LINE = 4096
MAX_ABS_VALUE = 1e15
MAX_JOB_ID = 0xFFFFFFFD
DEFAULT_CONF = "/etc/slurm/explschedd.conf"
CRED_TTL = 60          # seconds a credential lives; explschedd refuses longer ones
DEFAULT_TIMEOUT = 5.0  # seconds one report() may take, retries included
MAX_BACKOFF = 60.0     # longest pause after a failure during which points are dropped at once


class ReportError(Exception):
    """A report was not stored. ``code`` names the reason when explschedd gave one."""

    def __init__(self, message, code="", last_step=None):
        super().__init__(message)
        self.code = code
        self.last_step = last_step


class ReportRefused(ReportError):
    """explschedd (or the local check of the same rules) refused the report for good."""


class ReportRetry(ReportError):
    """explschedd could not decide now (busy, database or slurmctld trouble): try again later."""


def job_id():
    """The job to report for: $EXPLSCHED_JOB_ID, else $SLURM_JOB_ID; None when neither is set."""
    for name in ("EXPLSCHED_JOB_ID", "SLURM_JOB_ID"):
        value = os.environ.get(name, "")
        if value.isdigit() and 0 < int(value) <= MAX_JOB_ID:
            return int(value)
    return None


def _settings():
    """report_host, report_port and munge_socket of the settings file explschedd reads."""
    path = os.environ.get("EXPLSCHED_CONF") or DEFAULT_CONF
    values = {}
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.split("#", 1)[0].strip()
                if "=" in line:
                    key, value = line.split("=", 1)
                    values[key.strip()] = value.strip()
    except FileNotFoundError:
        if os.environ.get("EXPLSCHED_CONF"):
            raise ReportError("explsched: cannot read EXPLSCHED_CONF=%s" % path)
    return values


def _number(value):
    """Shortest text that reads back as the same float (what the C++ side prints, too)."""
    return repr(float(value))


def _parse_address(text):
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ReportError("explsched: address '%s' is not host:port" % text)
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, int(port)


def _check_value(field, value, allow_negative=True):
    if not math.isfinite(value):
        raise ReportRefused("explsched: report field '%s': %r is not a finite number" % (field, value),
                            "invalid_value")
    if abs(value) > MAX_ABS_VALUE:
        raise ReportRefused("explsched: report field '%s': %r is absurdly large" % (field, value),
                            "invalid_value")
    if not allow_negative and value < 0:
        raise ReportRefused("explsched: report field '%s': %r is negative" % (field, value),
                            "invalid_value")


def _checked_point(step, metric, throughput):
    """(step, metric, throughput) as int, float, float-or-None, or ReportRefused(invalid_value)."""
    try:
        if isinstance(step, bool) or not math.isfinite(step) or int(step) != step or step < 0:
            raise ValueError
        step = int(step)
    except (TypeError, ValueError, OverflowError):
        raise ReportRefused("explsched: report field 'step': %r is not a non-negative integer" % (step,),
                            "invalid_value")
    if step > MAX_ABS_VALUE:
        raise ReportRefused("explsched: report field 'step': %d is absurdly large" % step, "invalid_value")
    values = {"metric": metric, "throughput": throughput}
    for field, value in values.items():
        if value is None:
            continue
        try:
            values[field] = float(value)
        except (TypeError, ValueError, OverflowError):
            raise ReportRefused("explsched: report field '%s': %r is not a number" % (field, value),
                                "invalid_value")
    if values["metric"] is None:
        raise ReportRefused("explsched: report field 'metric': None is not a number", "invalid_value")
    _check_value("metric", values["metric"])
    if values["throughput"] is not None:
        _check_value("throughput", values["throughput"], allow_negative=False)
    return step, values["metric"], values["throughput"]


def format_signed_text(job, step, metric, throughput, client_time):
    """The text the munge credential signs (everything of the request line before ' cred=')."""
    text = "%s job=%d step=%d metric=%s" % (REQUEST_TAG, job, step, _number(metric))
    if throughput is not None:
        text += " throughput=%s" % _number(throughput)
    return text + " time=%s" % _number(client_time)


def parse_reply(line):
    """A reply line as a dict: status, code, job, step, last_step, msg."""
    reply = {"status": None, "code": "", "job": None, "step": None, "last_step": None, "msg": ""}
    head, sep, msg = line.partition(" msg=")
    if sep:
        reply["msg"] = msg
    tokens = head.split(" ")
    if tokens[0] != REPLY_TAG or len(tokens) < 2:
        raise ReportError("explsched: explschedd sent an unexpected reply: %r" % line[:80])
    if tokens[1] not in ("stored", "duplicate", "refused", "retry"):
        raise ReportError("explsched: explschedd sent an unknown status: %r" % tokens[1][:40])
    reply["status"] = tokens[1]
    for token in tokens[2:]:
        key, _, value = token.partition("=")
        if key == "code":
            reply["code"] = value
        elif key in ("job", "step", "last_step") and value.isdigit():
            reply[key] = int(value)
    return reply


def _report_uid():
    """explschedd's uid from $EXPLSCHED_REPORT_UID (credentials are restricted to it), or None."""
    value = os.environ.get("EXPLSCHED_REPORT_UID", "")
    return int(value) if value.isdigit() else None


def _env_timeout():
    """$EXPLSCHED_REPORT_TIMEOUT (seconds one report() may take), else DEFAULT_TIMEOUT."""
    try:
        value = float(os.environ.get("EXPLSCHED_REPORT_TIMEOUT", ""))
        return value if 0 < value <= 3600 else DEFAULT_TIMEOUT
    except ValueError:
        return DEFAULT_TIMEOUT


_warned = set()
_warned_lock = threading.Lock()


def _warn_once(kind, message):
    """One warning per kind and process: a training loop reporting every step must not flood its log."""
    with _warned_lock:
        if kind in _warned:
            return
        _warned.add(kind)
    warnings.warn(message + " (further such points are dropped without a warning)", RuntimeWarning, stacklevel=4)


class Reporter:
    """A connection to explschedd, reused across reports. Thread-safe.

    timeout bounds one report() call in seconds, retries and munge included. strict=False (the
    default) drops a point that cannot be stored (see the module docstring); strict=True raises.
    """

    def __init__(self, address=None, munge_socket=None, timeout=None, munge_command="munge",
                 strict=False, report_uid=None):
        if timeout is None:
            timeout = _env_timeout()
        settings = None
        if address is None:
            address = os.environ.get("EXPLSCHED_REPORT_ADDR")
        if address is None:
            settings = _settings()
            address = "%s:%s" % (settings.get("report_host", "127.0.0.1"), settings.get("report_port", "6828"))
        self.host, self.port = _parse_address(address)
        if munge_socket is None:
            munge_socket = os.environ.get("EXPLSCHED_MUNGE_SOCKET")
        if munge_socket is None:
            if settings is None:
                settings = _settings()
            munge_socket = settings.get("munge_socket") or None
        self.munge_socket = munge_socket
        self.munge_command = munge_command
        self.report_uid = _report_uid() if report_uid is None else report_uid
        self.timeout = float(timeout)
        self.strict = strict
        self._sock = None
        self._buffer = b""
        self._lock = threading.Lock()
        self._skip_until = 0.0  # after a failure, points are dropped at once until then
        self._backoff = 0.0

    def close(self):
        with self._lock:
            self._disconnect()

    def _disconnect(self):
        if self._sock is not None:
            self._sock.close()
        self._sock = None
        self._buffer = b""

    def _credential(self, payload, deadline):
        cmd = [self.munge_command, "--cipher", "none", "--ttl", str(CRED_TTL)]
        if self.report_uid is not None:
            cmd += ["--restrict-uid", str(self.report_uid)]
        if self.munge_socket:
            cmd += ["--socket", self.munge_socket]
        try:
            done = subprocess.run(cmd, input=payload.encode("ascii"), capture_output=True,
                                  timeout=max(0.01, deadline - time.monotonic()), check=False)
        except (OSError, subprocess.TimeoutExpired) as err:
            raise ReportError("explsched: cannot run %s: %s" % (self.munge_command, err))
        if done.returncode != 0:
            why = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise ReportError("explsched: cannot get a munge credential: %s" % (why[-1] if why else "munge failed"))
        return done.stdout.decode("ascii").strip()

    def _exchange(self, line, deadline):
        def left():
            # An attempt that reaches the network gets a short slice even when munge used up the
            # budget, so a slow munge reads "timed out", not "cannot connect".
            return max(deadline - time.monotonic(), 0.05)

        if self._sock is None:
            try:
                self._sock = socket.create_connection((self.host, self.port), timeout=left())
            except OSError as err:
                raise ReportError("explsched: cannot connect to explschedd at %s:%d: %s"
                                  % (self.host, self.port, err))
            self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock.settimeout(left())
        self._sock.sendall(line.encode("ascii"))
        while b"\n" not in self._buffer:
            if len(self._buffer) > MAX_LINE:
                raise ReportError("explsched: reply from explschedd is longer than %d bytes" % MAX_LINE)
            self._sock.settimeout(left())
            chunk = self._sock.recv(4096)
            if not chunk:
                raise ConnectionError("explschedd closed the connection")
            self._buffer += chunk
        reply, _, self._buffer = self._buffer.partition(b"\n")
        return reply.decode("ascii", "replace").rstrip("\r")

    def _once(self, job, step, metric, throughput, deadline):
        """One report on the kept (or a new) connection: the reply dict. A connection the server
        closed while idle gets one more try at once."""
        for attempt in (0, 1):
            reused = self._sock is not None
            signed = format_signed_text(job, step, metric, throughput, time.time())
            # A fresh credential per attempt: munged refuses to decode one twice.
            line = "%s cred=%s\n" % (signed, self._credential(signed, deadline))
            try:
                reply = parse_reply(self._exchange(line, deadline))
            except (OSError, ConnectionError) as err:
                self._disconnect()
                if attempt == 0 and reused and deadline > time.monotonic():
                    continue
                raise ReportError("explsched: report to %s:%d failed: %s" % (self.host, self.port, err))
            except ReportError:
                self._disconnect()
                raise
            if reply["status"] == "retry":
                self._disconnect()
            return reply
        raise ReportError("explsched: report to %s:%d failed" % (self.host, self.port))

    def _send(self, job, step, metric, throughput):
        """Retries with backoff until the deadline; returns the reply dict or raises ReportError."""
        deadline = time.monotonic() + self.timeout
        pause = 0.05
        while True:
            try:
                reply = self._once(job, step, metric, throughput, deadline)
                if reply["status"] != "retry":
                    return reply
                error = ReportRetry("explsched: report not stored, try again (%s): %s"
                                    % (reply["code"], reply["msg"]), reply["code"])
            except ReportError as err:
                error = err
            pause = min(pause * 2, 1.0)
            if time.monotonic() + pause >= deadline:
                raise error
            time.sleep(pause)

    def report(self, step, metric, throughput=None, job=None, strict=None):
        """Sends one report; returns "stored" or "duplicate". When it cannot be stored: with
        strict, raises ReportError; otherwise warns once and returns "dropped" or "refused"."""
        strict = self.strict if strict is None else strict
        try:
            return self._report(step, metric, throughput, job, strict)
        except ReportError as err:
            if strict:
                raise
            if isinstance(err, ReportRefused):
                _warn_once("refused:" + err.code, "%s; the point is dropped" % err)
                return "refused"
            _warn_once("dropped", "%s; the point is dropped and training goes on" % err)
            return "dropped"

    def _report(self, step, metric, throughput, job, strict):
        if job is None:
            job = job_id()
        if job is None or not 0 < int(job) <= MAX_JOB_ID:
            raise ReportError("explsched: no job id (set EXPLSCHED_JOB_ID or run inside a Slurm job)")
        step, metric, throughput = _checked_point(step, metric, throughput)
        with self._lock:
            now = time.monotonic()
            if not strict and now < self._skip_until:
                raise ReportError("explsched: explschedd at %s:%d failed recently; point dropped without trying"
                                  % (self.host, self.port), "backoff")
            try:
                reply = self._send(int(job), step, metric, throughput)
            except ReportError:
                # Do not make every following step wait for a server that is down or swamped.
                self._backoff = min(max(self._backoff * 2, 1.0), MAX_BACKOFF)
                self._skip_until = time.monotonic() + self._backoff
                raise
            self._backoff = 0.0
            self._skip_until = 0.0
        status, code, msg = reply["status"], reply["code"], reply["msg"]
        if status in ("stored", "duplicate"):
            return status
        raise ReportRefused("explsched: report refused (%s): %s" % (code, msg), code, reply["last_step"])


_default = None
_default_lock = threading.Lock()


def report(step, metric, throughput=None, strict=False):
    """Reports (step, metric[, throughput in steps/s]) for this job; see the module docstring.
    Never raises unless strict=True: a point that cannot be stored is dropped with one warning."""
    global _default
    try:
        with _default_lock:
            if _default is None:
                _default = Reporter()
            reporter = _default
    except ReportError as err:
        if strict:
            raise
        _warn_once("setup", "%s; points are dropped" % err)
        return "dropped"
    return reporter.report(step, metric, throughput, strict=strict)
