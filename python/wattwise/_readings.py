"""In-process readings: the energy of a window the job marked, asked of the wattwise that runs the job.

``wattwise measure`` and ``wattwise tune`` listen on a Unix stream socket (mode 0600, in a directory only
their user can enter) and name it in WATTWISE_WINDOW_SOCKET. A question is one connection: one request line,
one reply line (docs/windows.md)::

    ww1 W <begin ns> <end ns> [rank=N]
    ww1 ok energy_j=412.5 duration_s=1.25 method=samples gpus=0:206.1,1:206.4
    ww1 unavailable <why>

Never a crash and never a hang: every question is bounded by a timeout; without the variable the answer is
None silently. When wattwise is gone (no socket, nobody listening, a reply that is not the protocol) the
answer is None, one RuntimeWarning says why, and later questions are not asked. When it is busy or slow (its
queue of connections full, the connection closed without a reply, no reply within the timeout) the answer is
None and questions pause for 1 s, doubling with each such failure in a row up to 60 s: a job pays a timeout
at most once per pause, and a wattwise that was overloaded once is asked again.
"""

import os
import socket
import threading
import time
import warnings

ENVIRONMENT_VARIABLE = "WATTWISE_WINDOW_SOCKET"
# wattwise answers once the 20 ms samples past the window's end are drained (every 0.5 s), and gives up after
# 3 s; the client waits a little longer so that it hears why.
DEFAULT_TIMEOUT_S = 5.0
MAX_REPLY_BYTES = 4096


class Reading:
    """What wattwise said about one window. ``energy_j`` is None when it is not known, and ``reason`` says
    why; ``energy_per_gpu_j`` maps each GPU's NVML index to its share."""

    __slots__ = ("energy_j", "energy_per_gpu_j", "duration_s", "method", "reason")

    def __init__(self, energy_j=None, energy_per_gpu_j=None, duration_s=None, method=None, reason=None):
        self.energy_j = energy_j
        self.energy_per_gpu_j = energy_per_gpu_j
        self.duration_s = duration_s
        self.method = method
        self.reason = reason

    def __repr__(self):
        if self.energy_j is None:
            return "Reading(energy_j=None, reason=%r)" % (self.reason,)
        return "Reading(energy_j=%r, method=%r, energy_per_gpu_j=%r)" % (
            self.energy_j, self.method, self.energy_per_gpu_j)


def format_request(begin_ns, end_ns, rank=None):
    line = "ww1 W %d %d" % (begin_ns, end_ns)
    if rank is not None:
        line += " rank=%d" % rank
    return line + "\n"


def parse_reply(line):
    """The Reading a reply line says; ValueError when it is not the protocol."""
    line = line.rstrip("\r\n")
    for word in ("unavailable", "bad"):
        prefix = "ww1 %s " % word
        if line.startswith(prefix):
            return Reading(reason="wattwise: " + line[len(prefix):])
    fields = line.split(" ")
    if fields[:2] != ["ww1", "ok"]:
        raise ValueError("not a wattwise reply: %r" % (line[:80],))
    values = dict(field.split("=", 1) for field in fields[2:] if "=" in field)
    gpus = {}
    for item in filter(None, values.get("gpus", "").split(",")):
        index, energy_j = item.split(":", 1)
        gpus[int(index)] = float(energy_j)
    return Reading(energy_j=float(values["energy_j"]), energy_per_gpu_j=gpus,
                   duration_s=float(values["duration_s"]) if "duration_s" in values else None,
                   method=values.get("method"))


class Busy(Exception):
    """wattwise did not answer this time, but may the next (overloaded or slow)."""


MAX_PAUSE_S = 60.0


class Asker:
    """Asks wattwise; remembers, per process, that it is gone, or pauses after it was busy."""

    def __init__(self):
        self._lock = threading.Lock()
        self._broken = None  # why wattwise could not be reached; then nothing more is asked
        self._pause_until = 0.0  # time.monotonic() before which nothing is asked (it was busy)
        self._busy_in_a_row = 0
        self._warned = False

    def reset(self):
        """Forget a failure (for tests)."""
        with self._lock:
            self._broken = None
            self._pause_until = 0.0
            self._busy_in_a_row = 0
            self._warned = False

    def ask(self, begin_ns, end_ns, rank=None, timeout_s=DEFAULT_TIMEOUT_S):
        path = os.environ.get(ENVIRONMENT_VARIABLE)
        if not path:
            return Reading(reason="not run by `wattwise measure` or `wattwise tune` (%s is not set)"
                           % ENVIRONMENT_VARIABLE)
        if self._broken is not None:
            return Reading(reason=self._broken)
        if time.monotonic() < self._pause_until:
            return Reading(reason="wattwise was busy or slow a moment ago: asking again later")
        try:
            reading = parse_reply(_exchange(path, format_request(begin_ns, end_ns, rank), timeout_s))
        except Busy as busy:
            return self._pause("cannot ask wattwise for a window's energy now (%s): %s" % (path, busy))
        except (OSError, ValueError, KeyError) as error:
            return self._give_up("cannot ask wattwise for a window's energy (%s): %s" % (path, error))
        with self._lock:
            self._busy_in_a_row = 0
        return reading

    def _warn_once(self, text):
        with self._lock:
            first = not self._warned
            self._warned = True
        if first:
            warnings.warn(text, RuntimeWarning, stacklevel=5)

    def _pause(self, why):
        with self._lock:
            self._pause_until = time.monotonic() + min(2.0 ** self._busy_in_a_row, MAX_PAUSE_S)
            self._busy_in_a_row += 1
        self._warn_once(why + "; asking again later")
        return Reading(reason=why)

    def _give_up(self, why):
        with self._lock:
            self._broken = why
        self._warn_once(why + "; energies read as None from now on")
        return Reading(reason=why)


def _exchange(path, request, timeout_s):
    """The reply line. OSError when nobody is there; Busy when wattwise did not answer this time."""
    deadline = time.monotonic() + timeout_s
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout_s)
        try:
            sock.connect(path)
        except (BlockingIOError, socket.timeout) as error:  # its queue of connections is full, for now
            raise Busy("connect: %s" % error)
        try:
            sock.sendall(request.encode("ascii"))
        except OSError:
            pass  # a busy wattwise may answer "unavailable" and close first: read what it said
        reply = b""
        while not reply.endswith(b"\n"):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise Busy("no reply within %.1f s" % timeout_s)
            sock.settimeout(remaining)
            try:
                chunk = sock.recv(MAX_REPLY_BYTES)
            except socket.timeout:
                raise Busy("no reply within %.1f s" % timeout_s)
            except ConnectionError:
                chunk = b""
            if not chunk:
                break
            reply += chunk
            if len(reply) > MAX_REPLY_BYTES:
                raise ValueError("a reply longer than %d bytes" % MAX_REPLY_BYTES)
    if not reply:
        raise Busy("the connection was closed without a reply")
    return reply.decode("utf-8", "replace")
