"""PyTorch helpers for wattwise markers; torch is imported here only, never by ``import wattwise``.

    from wattwise.torch import TrainLoopMarker

    marker = TrainLoopMarker(fine=True, sync=True)
    for images, labels in loader:
        with marker.iteration(samples=images.shape[0]):
            with marker.forward():
                loss = criterion(model(images), labels)
            with marker.backward():
                loss.backward()
            with marker.optimizer():
                optimizer.step()

GPU work is asynchronous: without a synchronize, a phase's end marker is sent when the kernels were
queued, not when they ran. ``sync=True`` calls torch.cuda.synchronize() before each marker so phases
line up with the GPU's power trace, at the cost of some speed (the queue drains at every phase).
"""

import contextlib

import wattwise

try:
    import torch as _torch
except ImportError as error:  # pragma: no cover - depends on the machine
    raise ImportError("wattwise.torch needs PyTorch: pip install torch") from error


def _nothing():
    return contextlib.nullcontext()


class TrainLoopMarker:
    """Marks iterations, and optionally forward/backward/optimizer, of a training loop."""

    def __init__(self, fine=False, sync=False):
        self.fine = fine  # also mark forward, backward and optimizer
        self.sync = sync and _torch.cuda.is_available()

    def _synchronize(self):
        if self.sync:
            _torch.cuda.synchronize()

    @contextlib.contextmanager
    def _phase(self, name, **counters):
        self._synchronize()
        wattwise.begin(name)
        try:
            yield
        finally:
            self._synchronize()
            wattwise.end(name, **counters)

    def iteration(self, samples=None, **counters):
        if samples is not None:
            counters["samples"] = samples
        return self._phase("iteration", **counters)

    def forward(self):
        return self._phase("forward") if self.fine else _nothing()

    def backward(self):
        return self._phase("backward") if self.fine else _nothing()

    def optimizer(self):
        return self._phase("optimizer") if self.fine else _nothing()

    def epoch(self, index=None, **counters):
        if index is not None:
            counters["epoch"] = index
        return self._phase("epoch", **counters)
