"""train_cnn.py's FLOP counting, checked without a GPU and without PyTorch: the counter sees exactly one
forward+backward and leaves no gradients, iteration and epoch markers carry flops= only when it is known,
and --no-flops turns it off. (On a machine with PyTorch, the real FlopCounterMode runs in the GPU evidence.)

    python3 tests/e2e/multirank_train_cnn_flops_test.py
"""

import contextlib
import importlib.util
import os
import sys
import types
import unittest
from unittest import mock

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "workloads", "train_cnn.py")


def load_script():
    spec = importlib.util.spec_from_file_location("train_cnn_under_test", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class RecordingCounter:
    """Stands in for FlopCounterMode: counts 5 GFLOP per forward and 10 per backward run inside it."""

    log = None

    def __init__(self, display=True):
        self.display = display
        self.active = False
        self.flops = 0

    def __enter__(self):
        self.active = True
        RecordingCounter.log.append("counter on")
        RecordingCounter.current = self
        return self

    def __exit__(self, *exc):
        self.active = False
        RecordingCounter.log.append("counter off")
        return False

    def get_total_flops(self):
        return self.flops


class FakeLoss:
    def __init__(self, log):
        self.log = log

    def backward(self):
        self.log.append("backward")
        counter = RecordingCounter.current
        if counter.active:
            counter.flops += 10e9


def fake_trainer(script, log):
    """A Trainer without torch: its collaborators record what count_flops does with them."""
    trainer = object.__new__(script.Trainer)
    trainer.args = types.SimpleNamespace(amp=False)
    trainer.autocast_device = "cpu"
    trainer.torch = types.SimpleNamespace(autocast=lambda device, enabled: contextlib.nullcontext())
    trainer.optimizer = types.SimpleNamespace(zero_grad=lambda set_to_none: log.append("zero_grad"))

    def loss():
        log.append("forward")
        counter = RecordingCounter.current
        if counter.active:
            counter.flops += 5e9
        return FakeLoss(log)

    trainer.loss = loss
    return trainer


class TrainCnnFlops(unittest.TestCase):
    def setUp(self):
        self.script = load_script()
        self.log = []
        RecordingCounter.log = self.log
        RecordingCounter.current = None

    def test_no_flops_flag_defaults_off(self):
        self.assertFalse(self.script.parse_arguments([]).no_flops)
        self.assertTrue(self.script.parse_arguments(["--no-flops"]).no_flops)

    def test_count_runs_one_forward_and_backward_inside_the_counter_and_clears_gradients(self):
        trainer = fake_trainer(self.script, self.log)
        flops = trainer.count_flops(RecordingCounter)
        self.assertEqual(flops, 15e9)
        self.assertEqual(self.log, ["zero_grad", "counter on", "forward", "backward", "counter off", "zero_grad"])
        self.assertFalse(RecordingCounter.current.display)

    def test_flops_per_iteration_uses_torchs_flop_counter(self):
        flop_counter = types.ModuleType("torch.utils.flop_counter")
        flop_counter.FlopCounterMode = RecordingCounter
        fake_modules = {"torch": types.ModuleType("torch"), "torch.utils": types.ModuleType("torch.utils"),
                        "torch.utils.flop_counter": flop_counter}
        args = self.script.parse_arguments([])
        with mock.patch.dict(sys.modules, fake_modules):
            self.assertEqual(self.script.flops_per_iteration(args, fake_trainer(self.script, self.log)), 15e9)

    def test_no_flops_never_touches_the_model(self):
        args = self.script.parse_arguments(["--no-flops"])
        self.assertIsNone(self.script.flops_per_iteration(args, None))  # None: any use would raise

    def test_a_pytorch_without_flop_counter_gives_none_and_says_so(self):
        args = self.script.parse_arguments([])
        with mock.patch.dict(sys.modules, {"torch.utils.flop_counter": None}), \
                mock.patch.object(self.script, "log") as log:
            self.assertIsNone(self.script.flops_per_iteration(args, fake_trainer(self.script, self.log)))
        self.assertIn("flop_counter", log.call_args[0][0])
        self.assertEqual(self.log, [])

    def test_counters_carry_flops_per_iteration_times_iterations_only_when_known(self):
        self.assertEqual(self.script.work_counters(128, None, 3), {"samples": 384})
        self.assertEqual(self.script.work_counters(128, 2.5e9, 1), {"samples": 128, "flops": 2.5e9})
        self.assertEqual(self.script.work_counters(128, 2.5e9, 4), {"samples": 512, "flops": 10e9})


if __name__ == "__main__":
    unittest.main()
