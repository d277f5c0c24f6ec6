"""wattwise.torch's TrainLoopMarker in a real (CPU) PyTorch training loop, where torch is installed (Debian's
python3-torch in CI); skipped, naming the missing package, elsewhere."""

import importlib.util
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from marker_receiver import ReceiverTestCase  # noqa: E402


@unittest.skipIf(importlib.util.find_spec("torch") is None,
                 "wattwise.torch not exercised: torch is not installed here (Debian: python3-torch)")
class TrainLoopMarkerOnTheCpu(ReceiverTestCase):
    def test_two_epochs_of_three_iterations_with_forward_backward_and_optimizer(self):
        import torch
        from wattwise.torch import TrainLoopMarker

        model = torch.nn.Linear(4, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        data = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(3)]
        marker = TrainLoopMarker(fine=True, sync=True)  # sync is a no-op without CUDA, never an error
        for epoch in range(2):
            with marker.epoch(epoch, samples=24):
                for x, y in data:
                    with marker.iteration(samples=x.shape[0]):
                        with marker.forward():
                            loss = torch.nn.functional.mse_loss(model(x), y)
                        with marker.backward():
                            optimizer.zero_grad()
                            loss.backward()
                        with marker.optimizer():
                            optimizer.step()
        # per epoch: epoch begin/end, and per iteration 2 + 3 x 2 markers
        markers = self.receiver.markers(count=2 * (2 + 3 * 8))
        ends = [m for m in markers if m.kind == "E"]
        names = [m.name for m in ends]
        self.assertEqual(names.count("epoch"), 2)
        self.assertEqual(names.count("iteration"), 6)
        for phase in ("forward", "backward", "optimizer"):
            self.assertEqual(names.count(phase), 6, phase)
        self.assertEqual([m.counters["samples"] for m in ends if m.name == "iteration"], [8] * 6)
        self.assertEqual([m.counters["epoch"] for m in ends if m.name == "epoch"], [0, 1])
        # Phases nest: each iteration's forward ends before the iteration does.
        first_iteration_end = names.index("iteration")
        self.assertLess(names.index("forward"), first_iteration_end)


if __name__ == "__main__":
    unittest.main()
