"""A Unix datagram socket standing in for wattwise's MarkerReceiver, read on its own thread as wattwise
reads it (the kernel queues only ~10 datagrams per socket, so a test that sends more must read meanwhile)."""

import os
import socket
import tempfile
import threading
import time
import unittest

import wattwise

RANK_VARIABLES = ("RANK", "LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_RANK", "SLURM_LOCALID",
                  "SLURM_PROCID", "MPI_LOCALRANKID", "PMI_RANK")


class Marker:
    """One received marker: kind (B/E/P), t_ns, name and counters (numbers)."""

    def __init__(self, text):
        fields = text.split(" ")
        self.kind, self.t_ns, self.name = fields[1], int(fields[2]), fields[3]
        pairs = dict(field.split("=", 1) for field in fields[4:])
        self.pid = int(pairs.pop("pid"))
        self.counters = {key: float(value) for key, value in pairs.items()}

    def __repr__(self):
        return "%s %s %s" % (self.kind, self.name, self.counters)


class ThreadedReceiver:
    def __init__(self):
        self.directory = tempfile.TemporaryDirectory(prefix="ww-py-")
        self.path = os.path.join(self.directory.name, "markers.sock")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.sock.settimeout(0.05)
        self.texts = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self):
        while not self._stop.is_set():
            try:
                self.texts.append(self.sock.recv(65536).decode("utf-8"))
            except socket.timeout:
                continue

    def markers(self, count=None, timeout_s=5.0):
        """The markers received so far; with ``count``, waits (up to timeout_s) until that many arrived."""
        deadline = time.monotonic() + timeout_s
        while count is not None and len(self.texts) < count and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.05)  # let stragglers arrive, so a test sees a marker too many
        return [Marker(text) for text in list(self.texts)]

    def close(self):
        self._stop.set()
        self._thread.join()
        self.sock.close()
        self.directory.cleanup()


class ReceiverTestCase(unittest.TestCase):
    """Points WATTWISE_SOCKET at a fresh receiver for each test, with no rank variables set."""

    def setUp(self):
        self.receiver = ThreadedReceiver()
        self.saved = {k: os.environ.get(k) for k in ("WATTWISE_SOCKET",) + RANK_VARIABLES}
        for key in RANK_VARIABLES:
            os.environ.pop(key, None)
        os.environ["WATTWISE_SOCKET"] = self.receiver.path
        wattwise._channel.reset()
        # The client never blocks and drops what the kernel's short queue (~10 datagrams) cannot hold; a test
        # that counts markers must not depend on how soon this machine schedules the reader thread, so here
        # sends wait for room (up to 5 s). Dropping is tested on its own in test_markers.py.
        wattwise._channel.get().settimeout(5.0)

    def tearDown(self):
        for key, value in self.saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        wattwise._channel.reset()
        self.receiver.close()

    def assertNothingDropped(self):
        self.assertEqual(wattwise.dropped(), 0)
