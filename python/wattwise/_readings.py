"""In-process readings: the energy of a window the job marked, asked of the wattwise that runs the job.

``wattwise measure`` and ``wattwise tune`` listen on a Unix stream socket (mode 0600, in a directory only
their user can enter) and name it in WATTWISE_WINDOW_SOCKET. A question is one connection: one request line,
one reply line (docs/windows.md)::

    ww1 W <begin ns> <end ns> [rank=N]
    ww1 ok energy_j=412.5 duration_s=1.25 method=samples gpus=0:206.1,1:206.4
    ww1 unavailable <why>

Never a crash and never a hang: every question is bounded by a timeout; without the variable the answer is
None silently; when wattwise cannot be reached (a dead socket, a timeout, a reply that is not the protocol)
the answer is None, one RuntimeWarning says why, and later questions are not asked (so a job never pays the
timeout twice).
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


class Asker:
    """Asks wattwise; remembers, per process, that it could not be reached."""

    def __init__(self):
        self._lock = threading.Lock()
        self._broken = None  # why wattwise could not be reached; then nothing more is asked

    def reset(self):
        """Forget a failure (for tests)."""
        with self._lock:
            self._broken = None

    def ask(self, begin_ns, end_ns, rank=None, timeout_s=DEFAULT_TIMEOUT_S):
        path = os.environ.get(ENVIRONMENT_VARIABLE)
        if not path:
            return Reading(reason="not run by `wattwise measure` or `wattwise tune` (%s is not set)"
                           % ENVIRONMENT_VARIABLE)
        if self._broken is not None:
            return Reading(reason=self._broken)
        try:
            return parse_reply(_exchange(path, format_request(begin_ns, end_ns, rank), timeout_s))
        except (OSError, ValueError, KeyError) as error:  # socket.timeout is an OSError
            return self._give_up("cannot ask wattwise for a window's energy (%s): %s" % (path, error))

    def _give_up(self, why):
        with self._lock:
            first = self._broken is None
            self._broken = why
        if first:
            warnings.warn(why + "; energies read as None from now on", RuntimeWarning, stacklevel=4)
        return Reading(reason=why)


def _exchange(path, request, timeout_s):
    deadline = time.monotonic() + timeout_s
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout_s)
        sock.connect(path)
        sock.sendall(request.encode("ascii"))
        reply = b""
        while not reply.endswith(b"\n"):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise socket.timeout("no reply within %.1f s" % timeout_s)
            sock.settimeout(remaining)
            chunk = sock.recv(MAX_REPLY_BYTES)
            if not chunk:
                break
            reply += chunk
            if len(reply) > MAX_REPLY_BYTES:
                raise ValueError("a reply longer than %d bytes" % MAX_REPLY_BYTES)
    return reply.decode("utf-8", "replace")
