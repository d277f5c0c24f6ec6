"""wattwise phase markers for Python jobs (pure Python, no dependencies).

Run under ``wattwise measure -- python train.py``, a job finds the path of a Unix datagram socket in the
environment variable WATTWISE_SOCKET and sends it markers, so energy and time can be attributed to
phases::

    import wattwise

    with wattwise.phase("training"):
        for epoch in range(epochs):
            with wattwise.phase("epoch", epoch=epoch):
                for batch in loader:
                    with wattwise.iteration(samples=len(batch)):
                        step(batch)

Without WATTWISE_SOCKET (the job runs on its own), or when the socket has gone away, every call is a
silent no-op: a job never fails because it is not being measured. Sending never blocks: when wattwise's
queue is full the marker is dropped and counted (``dropped()``). The variable is read once, on the first
call. Thread-safe. Timestamps come from time.monotonic_ns(), which is CLOCK_MONOTONIC on Linux,
the clock wattwise measures with. The rank is the local rank of the launcher (LOCAL_RANK, ...; docs/markers.md).
Wire format: docs/markers.md.

Callbacks that mark a framework's training (PyTorch Lightning, transformers' Trainer, Keras 3) are in
wattwise.lightning, wattwise.huggingface and wattwise.keras (docs/frameworks.md); importing wattwise imports
no framework.

In-process readings: a job run by ``wattwise measure`` or ``wattwise tune`` can ask it for the energy of a
window it marked; the window's markers are ordinary ones, so it is also a phase of the summary::

    with wattwise.window("epoch") as w:
        train_one_epoch()
    print(w.energy_j, w.energy_per_gpu_j, w.duration_s, w.method)   # energy_j None when not known

``window_energy(name)`` answers the same for the phase ``name`` this process ended last (docs/windows.md).
"""

import contextlib
import json
import math
import os
import socket
import threading
import time

from wattwise import _readings

__all__ = ["begin", "end", "point", "phase", "iteration", "enabled", "encode", "dropped", "window", "Window",
           "window_energy"]

# The C++ project's version (CMakeLists.txt, project VERSION); pyproject.toml reads it from here and a test
# checks that the two agree.
__version__ = "0.1.0"

VERSION_TAG = "ww1"
ENVIRONMENT_VARIABLE = "WATTWISE_SOCKET"
# The socket for a job process that changed user (sudo -u): the first is reachable by wattwise's user only.
CHANGED_USER_ENVIRONMENT_VARIABLE = "WATTWISE_SOCKET_CHANGED_USER"
MAX_MESSAGE_BYTES = 8192
_RESERVED_KEYS = ("pid", "rank", "global_rank", "ww_dropped")


class _Channel:
    """The socket to wattwise, opened on first use; None when there is nowhere to send."""

    def __init__(self):
        self._lock = threading.Lock()
        self._opened = False
        self._socket = None
        self.rank = None
        self.global_rank = None
        self.dropped = 0

    def get(self):
        if not self._opened:
            with self._lock:
                if not self._opened:
                    self.rank, self.global_rank = _rank_from_environment()
                    self._socket = _connect_either(
                        os.environ.get(ENVIRONMENT_VARIABLE),
                        os.environ.get(CHANGED_USER_ENVIRONMENT_VARIABLE),
                    )
                    self._opened = True
        return self._socket

    def reset(self):
        """Forget the channel so the next call reads the environment again (for tests)."""
        with self._lock:
            if self._socket is not None:
                self._socket.close()
            self._socket = None
            self._opened = False
            self.dropped = 0
        _ended_windows.reset()  # and what the in-process readings remembered
        _asker.reset()


# A marker's rank picks the GPU on this node, so it is the *local* rank: torchrun's LOCAL_RANK, Open MPI's
# OMPI_COMM_WORLD_LOCAL_RANK, SLURM's SLURM_LOCALID (srun), MPICH's MPI_LOCALRANKID. The global rank is not
# a GPU beyond one node; it travels as the label global_rank, and stands in for the local rank only when no
# launcher set one (one node: the same number).
_LOCAL_RANK_VARIABLES = ("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID")
_GLOBAL_RANK_VARIABLES = ("RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "PMI_RANK")


def _first_number(names):
    for name in names:
        text = os.environ.get(name, "")
        if text.isdigit():
            return int(text)
    return None


def _rank_from_environment():
    """(local rank, global rank) from the launcher's variables; either may be None."""
    local, global_rank = _first_number(_LOCAL_RANK_VARIABLES), _first_number(_GLOBAL_RANK_VARIABLES)
    return (local if local is not None else global_rank), global_rank


def _connect(path):
    """A connected non-blocking datagram socket; raises OSError (PermissionError when out of reach)."""
    if not path:
        raise FileNotFoundError("no socket")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        # Non-blocking: a stalled wattwise must never stall the job; a marker that does not fit is dropped.
        sock.setblocking(False)
        sock.connect(path)
        return sock
    except OSError:
        sock.close()
        raise


def _connect_either(path, changed_user_path):
    """The job's socket, or, for a process that changed user (sudo -u) and may not reach it, the
    changed-user socket; None when neither can be reached."""
    try:
        return _connect(path)
    except PermissionError:
        pass
    except OSError:
        return None
    try:
        return _connect(changed_user_path)
    except OSError:
        return None


_channel = _Channel()


def _percent_encode(text):
    out = []
    # "replace": a str with lone surrogates (os.fsdecode of a non-UTF-8 file name) must not raise into the job.
    for byte in text.encode("utf-8", "replace"):
        if byte <= 0x20 or byte in (0x3D, 0x25, 0x7F):  # space and controls, '=', '%', DEL
            out.append("%%%02X" % byte)
        else:
            out.append(chr(byte))
    # Bytes above 0x7f were turned into single code points; turn them back into the UTF-8 bytes.
    return "".join(out).encode("latin-1").decode("utf-8")


def _format_number(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError("wattwise counter values must be numbers, got %r" % (value,))
    if isinstance(value, int):
        return str(value)
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def encode(kind, name, t_ns, pid, rank=None, counters=None, dropped=0, global_rank=None):
    """The datagram text for one marker: ``ww1 KIND NS NAME pid=N [rank=N] [global_rank=N] [key=number ...]``."""
    if kind not in ("B", "E", "P"):
        raise ValueError("marker kind must be B, E or P, got %r" % (kind,))
    if not name:
        raise ValueError("a marker needs a non-empty name")
    fields = [VERSION_TAG, kind, str(int(t_ns)), _percent_encode(str(name)), "pid=%d" % pid]
    if rank is not None:
        fields.append("rank=%d" % rank)
    if global_rank is not None:
        fields.append("global_rank=%d" % global_rank)
    if dropped:
        fields.append("ww_dropped=%d" % dropped)  # what this process lost before: the run reports it
    for key, value in (counters or {}).items():
        if key in _RESERVED_KEYS:
            raise ValueError("counter name %r is reserved by wattwise" % (key,))
        if isinstance(value, float) and not math.isfinite(value):
            continue  # the format carries finite numbers only; an inf/nan counter is left out
        fields.append("%s=%s" % (_percent_encode(str(key)), _format_number(value)))
    return " ".join(fields)


class _EndedWindows:
    """The last ended (begin, end) of each phase name this process marked, for window_energy(). Begins and
    ends pair as wattwise pairs them (docs/markers.md): an end closes the innermost open begin of its name."""

    def __init__(self):
        self._lock = threading.Lock()
        self._open = {}
        self._last = {}

    def note(self, kind, name, t_ns):
        with self._lock:
            if kind == "B":
                self._open.setdefault(name, []).append(t_ns)
            elif kind == "E" and self._open.get(name):
                self._last[name] = (self._open[name].pop(), t_ns)

    def last(self, name):
        with self._lock:
            return self._last.get(name)

    def reset(self):
        with self._lock:
            self._open.clear()
            self._last.clear()


_ended_windows = _EndedWindows()
_asker = _readings.Asker()


def _send(kind, name, counters, t_ns=None):
    """Sends one marker stamped ``t_ns`` (now when None). A marker may be stamped in the past when the
    framework tells us about a phase only after it began (transformers' evaluation, wattwise.callbacks)."""
    sock = _channel.get()
    if sock is None:
        return
    if t_ns is None:
        t_ns = time.monotonic_ns()
    _ended_windows.note(kind, str(name), t_ns)
    message = encode(kind, name, t_ns, os.getpid(), _channel.rank, counters,
                     _channel.dropped, _channel.global_rank).encode("utf-8")
    if len(message) > MAX_MESSAGE_BYTES:
        raise ValueError("wattwise marker %r is longer than %d bytes" % (name, MAX_MESSAGE_BYTES))
    try:
        sock.send(message)
    except OSError:
        # wattwise's queue is full (it stalled) or it has gone away: drop and count, never block or break
        # the job. (A lost count under a race between threads is harmless.)
        _channel.dropped += 1


def enabled():
    """True when markers go somewhere (WATTWISE_SOCKET set and reachable at the first call)."""
    return _channel.get() is not None


def dropped():
    """How many markers this process dropped because they could not be sent at once (queue full, wattwise
    gone)."""
    return _channel.dropped


def begin(name, **counters):
    _send("B", name, counters)


def end(name, **counters):
    _send("E", name, counters)


def point(name, **counters):
    _send("P", name, counters)


@contextlib.contextmanager
def phase(name, **counters):
    """Marks the block as phase ``name``; the counters go with its end (they often count its work)."""
    begin(name)
    try:
        yield
    finally:
        end(name, **counters)


def iteration(samples=None, **counters):
    """One training/inference iteration; ``samples`` is the work it did (e.g. the batch size)."""
    if samples is not None:
        counters["samples"] = samples
    return phase("iteration", **counters)


TUNING_STATE_VARIABLE = "WATTWISE_TUNING_STATE"


def tuning_state():
    """What ``wattwise tune`` running this job is doing, as a dict, or None when no ``wattwise tune`` runs it.

    The keys (docs/tune.md "The job's view"): ``phase`` (searching, settled, dry-run, no-markers, stopped),
    ``knob`` (power-limit or sm-clock), ``unit`` (W or MHz), ``value`` (the setting in force now),
    ``captured_value`` (the one the GPUs had before the job, restored at its end), ``settled`` (the value it settled
    on, or None), ``dry_run``, ``iterations``, ``profiling_iterations`` and ``decisions`` (counts). wattwise
    rewrites the file named in WATTWISE_TUNING_STATE atomically at every decision, so a read never sees half
    of it; it is cheap enough to read once per epoch, not meant for every iteration.
    """
    path = os.environ.get(TUNING_STATE_VARIABLE)
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def current_setting():
    """The setting ``wattwise tune`` holds now (e.g. 250.0 for a 250 W power limit), or None without it."""
    state = tuning_state()
    return None if state is None else state.get("value")


class Window:
    """A window marked by ``window()``; its energy is asked of wattwise when first read, after the window
    ended (the answer is kept). ``energy_j`` (J, summed over the window's GPUs), ``energy_per_gpu_j`` (a dict
    from each GPU's NVML index to its J) and ``method`` are None when not known, and ``reason`` then says why;
    ``duration_s`` is the window's own length (None while it is open)."""

    def __init__(self, name, rank=None, timeout_s=_readings.DEFAULT_TIMEOUT_S):
        self.name = name
        self.rank = rank
        self.timeout_s = timeout_s
        self.begin_ns = None
        self.end_ns = None
        self._reading = None

    def reading(self):
        """What wattwise said, as a wattwise._readings.Reading (asked once, on the first call after the end)."""
        if self.end_ns is None:
            return _readings.Reading(reason="the window has not ended")
        if self._reading is None:
            self._reading = _asker.ask(self.begin_ns, self.end_ns, self.rank, self.timeout_s)
        return self._reading

    @property
    def energy_j(self):
        return self.reading().energy_j

    @property
    def energy_per_gpu_j(self):
        return self.reading().energy_per_gpu_j

    @property
    def method(self):
        return self.reading().method

    @property
    def reason(self):
        return self.reading().reason

    @property
    def duration_s(self):
        return None if self.end_ns is None else (self.end_ns - self.begin_ns) / 1e9

    def __repr__(self):
        return "Window(%r, duration_s=%r)" % (self.name, self.duration_s)


@contextlib.contextmanager
def window(name, timeout_s=_readings.DEFAULT_TIMEOUT_S, **counters):
    """Marks the block as phase ``name`` (as ``phase()`` does) and yields a Window whose ``energy_j``, read
    after the block, is the block's energy as the running wattwise measured it: from the 20 ms power samples,
    available ~0.5 s after the end (reading it waits at most ``timeout_s``). None without wattwise."""
    _channel.get()
    w = Window(name, _channel.rank, timeout_s)
    w.begin_ns = time.monotonic_ns()
    _send("B", name, {}, w.begin_ns)
    try:
        yield w
    finally:
        w.end_ns = time.monotonic_ns()
        _send("E", name, counters, w.end_ns)


def window_energy(name, timeout_s=_readings.DEFAULT_TIMEOUT_S):
    """The energy in joules, over this process's GPU (its rank's; all the job's GPUs without a rank), of the
    phase ``name`` this process ended last, as the wattwise that runs the job measured it; None when it is
    not known: no such phase, no wattwise, or wattwise could not say (docs/windows.md).

    The framework callbacks (wattwise.callbacks) log an epoch's energy through this one function, and log
    nothing while it returns None; so callers must treat None as "not known", never as zero. It waits for
    wattwise's answer, ~0.5 s after the phase's end, at most ``timeout_s``.
    """
    last = _ended_windows.last(str(name))
    if last is None:
        return None
    return _asker.ask(last[0], last[1], _channel.rank, timeout_s).energy_j
