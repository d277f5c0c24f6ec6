"""The framework callbacks' hooks, driven through a fake trainer, against a real marker receiver socket.

The hooks are framework-free (wattwise.callbacks); the framework classes only mix them into the framework's
base class, and are trained for real in test_callbacks_frameworks.py where the framework is installed.
"""

import os
import subprocess
import sys
import time
import unittest
from types import SimpleNamespace
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import wattwise  # noqa: E402
from wattwise import callbacks  # noqa: E402
from marker_receiver import ReceiverTestCase  # noqa: E402


class FakeTensor:
    def __init__(self, *shape):
        self.shape = shape


class FakeLightningModule:
    def __init__(self):
        self.logged = []

    def log(self, name, value):
        self.logged.append((name, value))


def kinds_and_names(markers):
    return [(m.kind, m.name) for m in markers]


def ends(markers, name):
    return [m for m in markers if m.kind == "E" and m.name == name]


def epoch_block(iterations, evaluation_inside):
    block = [("B", "epoch")] + [("B", "iteration"), ("E", "iteration")] * iterations
    evaluation = [("B", "evaluation"), ("E", "evaluation")]
    return block + evaluation + [("E", "epoch")] if evaluation_inside else block + [("E", "epoch")] + evaluation


def drive_lightning_fit(callback, module, epochs=2, batches=3):
    """The hook order of Lightning 2.x's fit(): sanity check, then per epoch its batches and validation."""
    trainer = SimpleNamespace(current_epoch=0, sanity_checking=True)
    batch = (FakeTensor(4, 3), FakeTensor(4))
    callback.on_validation_start(trainer, module)
    callback.on_validation_end(trainer, module)
    trainer.sanity_checking = False
    callback.on_train_start(trainer, module)
    for epoch in range(epochs):
        trainer.current_epoch = epoch
        callback.on_train_epoch_start(trainer, module)
        for index in range(batches):
            callback.on_train_batch_start(trainer, module, batch, index)
            callback.on_train_batch_end(trainer, module, {"loss": 0.5}, batch, index)
        callback.on_validation_start(trainer, module)
        callback.on_validation_end(trainer, module)
        callback.on_train_epoch_end(trainer, module)
    callback.on_train_end(trainer, module)


class LightningCallback(ReceiverTestCase):
    def test_fit_marks_training_epochs_iterations_with_batch_size_and_validation(self):
        drive_lightning_fit(callbacks.LightningHooks(), FakeLightningModule())
        markers = self.receiver.markers(count=24)
        expected = [("B", "sanity_check"), ("E", "sanity_check"), ("B", "training")]
        expected += epoch_block(3, evaluation_inside=True) * 2 + [("E", "training")]
        self.assertEqual(kinds_and_names(markers), expected)
        self.assertEqual([m.counters["epoch"] for m in ends(markers, "epoch")], [0, 1])
        self.assertEqual([m.counters.get("samples") for m in ends(markers, "iteration")], [4] * 6)
        self.assertEqual([m.t_ns for m in markers], sorted(m.t_ns for m in markers))
        self.assertEqual({m.pid for m in markers}, {os.getpid()})
        self.assertNothingDropped()

    def test_epoch_energy_is_logged_into_the_module_when_wattwise_answers(self):
        module = FakeLightningModule()
        with mock.patch.object(wattwise, "window_energy", return_value=1234.5) as window_energy:
            drive_lightning_fit(callbacks.LightningHooks(), module)
        window_energy.assert_called_with("epoch")
        self.assertEqual(module.logged, [("wattwise/epoch_energy_j", 1234.5)] * 2)

    def test_nothing_is_logged_while_wattwise_cannot_answer(self):
        module = FakeLightningModule()
        drive_lightning_fit(callbacks.LightningHooks(), module)
        self.assertIsNone(wattwise.window_energy("epoch"))
        self.assertEqual(module.logged, [])

    def test_an_exception_ends_the_open_phases_innermost_first(self):
        callback, trainer, module = callbacks.LightningHooks(), SimpleNamespace(current_epoch=0), None
        callback.on_train_start(trainer, module)
        callback.on_train_epoch_start(trainer, module)
        callback.on_train_batch_start(trainer, module, FakeTensor(2), 0)
        callback.on_exception(trainer, module, RuntimeError("out of memory"))
        self.assertEqual(kinds_and_names(self.receiver.markers(count=6)),
                         [("B", "training"), ("B", "epoch"), ("B", "iteration"),
                          ("E", "iteration"), ("E", "epoch"), ("E", "training")])

    def test_a_batch_of_unknown_size_is_an_iteration_without_samples(self):
        callback, trainer = callbacks.LightningHooks(), SimpleNamespace(current_epoch=0)
        callback.on_train_batch_start(trainer, None, ["a", "b"], 0)
        callback.on_train_batch_end(trainer, None, None, ["a", "b"], 0)
        end = self.receiver.markers(count=2)[1]
        self.assertEqual((end.kind, end.name, end.counters), ("E", "iteration", {}))


def drive_trainer_train(callback, state, sleep_before_evaluation_s=0.0):
    """The hook order of transformers' Trainer.train() with evaluation at each epoch's end; returns the
    monotonic time just before each evaluation's first prediction step."""
    args = SimpleNamespace(per_device_train_batch_size=8, gradient_accumulation_steps=2)
    control = SimpleNamespace()
    before_prediction_ns = []
    callback.on_train_begin(args, state, control)
    for epoch in range(2):
        callback.on_epoch_begin(args, state, control)
        for step in range(3):
            callback.on_step_begin(args, state, control)
            state.global_step += 1
            state.epoch = epoch + (step + 1) / 3
            callback.on_step_end(args, state, control)
        callback.on_epoch_end(args, state, control)
        time.sleep(sleep_before_evaluation_s)
        before_prediction_ns.append(time.monotonic_ns())
        for _ in range(2):
            callback.on_prediction_step(args, state, control)
        callback.on_evaluate(args, state, control, metrics={"eval_loss": 0.5})
    callback.on_train_end(args, state, control)
    return before_prediction_ns


def fresh_trainer_state():
    return SimpleNamespace(epoch=0.0, global_step=0, log_history=[])


class HuggingFaceCallback(ReceiverTestCase):
    def test_train_marks_epochs_steps_as_iterations_with_samples_and_evaluation(self):
        drive_trainer_train(callbacks.HuggingFaceHooks(), fresh_trainer_state())
        markers = self.receiver.markers(count=22)
        expected = [("B", "training")] + epoch_block(3, evaluation_inside=False) * 2 + [("E", "training")]
        self.assertEqual(kinds_and_names(markers), expected)
        self.assertEqual([m.counters["epoch"] for m in ends(markers, "epoch")], [0, 1])
        # One step is one optimizer update: 8 per device x 2 accumulated batches.
        self.assertEqual([m.counters["samples"] for m in ends(markers, "iteration")], [16] * 6)
        self.assertNothingDropped()

    def test_evaluation_begins_when_the_epoch_before_it_ended_not_at_on_evaluate(self):
        before_prediction_ns = drive_trainer_train(callbacks.HuggingFaceHooks(), fresh_trainer_state(),
                                                   sleep_before_evaluation_s=0.02)
        markers = self.receiver.markers(count=22)
        epoch_ends = ends(markers, "epoch")
        evaluation_begins = [m for m in markers if m.kind == "B" and m.name == "evaluation"]
        for epoch_end, begin, before_ns in zip(epoch_ends, evaluation_begins, before_prediction_ns):
            self.assertGreaterEqual(begin.t_ns, epoch_end.t_ns)
            self.assertLess(begin.t_ns, before_ns - 10_000_000)  # not 20 ms later, at the prediction steps

    def test_a_stand_alone_evaluate_begins_at_its_first_prediction_step(self):
        callback, args, state, control = callbacks.HuggingFaceHooks(), SimpleNamespace(), fresh_trainer_state(), None
        before_ns = time.monotonic_ns()
        callback.on_prediction_step(args, state, control)
        after_first_ns = time.monotonic_ns()
        time.sleep(0.02)
        callback.on_prediction_step(args, state, control)
        callback.on_evaluate(args, state, control, metrics={})
        begin, end = self.receiver.markers(count=2)
        self.assertEqual((begin.kind, begin.name, end.kind, end.name), ("B", "evaluation", "E", "evaluation"))
        self.assertTrue(before_ns <= begin.t_ns <= after_first_ns)
        self.assertGreater(end.t_ns, after_first_ns + 10_000_000)

    def test_epoch_energy_goes_into_the_trainer_log_history_when_wattwise_answers(self):
        state = fresh_trainer_state()
        with mock.patch.object(wattwise, "window_energy", return_value=50.0):
            drive_trainer_train(callbacks.HuggingFaceHooks(), state)
        energy = [entry["wattwise/epoch_energy_j"] for entry in state.log_history]
        self.assertEqual(energy, [50.0, 50.0])
        self.assertEqual([entry["epoch"] for entry in state.log_history], [1.0, 2.0])

    def test_nothing_goes_into_the_log_history_while_wattwise_cannot_answer(self):
        state = fresh_trainer_state()
        drive_trainer_train(callbacks.HuggingFaceHooks(), state)
        self.assertEqual(state.log_history, [])


def drive_keras_fit(callback, epoch_logs):
    """The hook order of Keras 3's fit() with validation_data: validation runs before on_epoch_end."""
    callback.on_train_begin()
    for epoch, logs in enumerate(epoch_logs):
        callback.on_epoch_begin(epoch)
        for batch in range(3):
            callback.on_train_batch_begin(batch)
            callback.on_train_batch_end(batch, {"loss": 0.5})
        callback.on_test_begin()
        callback.on_test_end({"loss": 0.4})
        callback.on_epoch_end(epoch, logs)
    callback.on_train_end()


class KerasCallback(ReceiverTestCase):
    def test_fit_marks_epochs_batches_with_the_given_batch_size_and_validation(self):
        drive_keras_fit(callbacks.KerasHooks(batch_size=32), [{}, {}])
        markers = self.receiver.markers(count=22)
        expected = [("B", "training")] + epoch_block(3, evaluation_inside=True) * 2 + [("E", "training")]
        self.assertEqual(kinds_and_names(markers), expected)
        self.assertEqual([m.counters["epoch"] for m in ends(markers, "epoch")], [0, 1])
        self.assertEqual([m.counters["samples"] for m in ends(markers, "iteration")], [32] * 6)
        self.assertNothingDropped()

    def test_without_a_batch_size_iterations_carry_no_samples(self):
        drive_keras_fit(callbacks.KerasHooks(), [{}])
        self.assertEqual([m.counters for m in ends(self.receiver.markers(count=12), "iteration")], [{}] * 3)

    def test_epoch_energy_goes_into_the_epoch_logs_when_wattwise_answers(self):
        logs = [{"loss": 1.0}, {"loss": 0.9}]
        with mock.patch.object(wattwise, "window_energy", return_value=7.25):
            drive_keras_fit(callbacks.KerasHooks(), logs)
        self.assertEqual([entry.get("wattwise_epoch_energy_j") for entry in logs], [7.25, 7.25])

    def test_nothing_goes_into_the_epoch_logs_while_wattwise_cannot_answer(self):
        logs = [{"loss": 1.0}]
        drive_keras_fit(callbacks.KerasHooks(), logs)
        self.assertEqual(logs, [{"loss": 1.0}])

    def test_a_batch_size_that_is_not_a_positive_whole_number_is_refused_at_once(self):
        for bad in (0, -8, 2.5, "64", True):
            with self.assertRaisesRegex(ValueError, "whole number above 0"):
                callbacks.KerasHooks(batch_size=bad)

    def test_an_end_hook_without_its_begin_sends_nothing(self):
        # A callback added mid-run sees an end first; an unmatched end would be reported by wattwise.
        callback = callbacks.KerasHooks()
        callback.on_epoch_end(0, {})
        callback.on_test_end()
        wattwise.point("sync")
        self.assertEqual(kinds_and_names(self.receiver.markers(count=1)), [("P", "sync")])


class WithoutWattwise(unittest.TestCase):
    def setUp(self):
        self.saved = os.environ.pop("WATTWISE_SOCKET", None)
        wattwise._channel.reset()

    def tearDown(self):
        if self.saved is not None:
            os.environ["WATTWISE_SOCKET"] = self.saved
        wattwise._channel.reset()

    def test_every_callback_runs_as_a_silent_no_op_and_logs_nothing(self):
        module, state, logs = FakeLightningModule(), fresh_trainer_state(), [{}]
        drive_lightning_fit(callbacks.LightningHooks(), module)
        drive_trainer_train(callbacks.HuggingFaceHooks(), state)
        drive_keras_fit(callbacks.KerasHooks(batch_size=4), logs)
        self.assertEqual((module.logged, state.log_history, logs), ([], [], [{}]))
        self.assertIsNone(wattwise.window_energy("epoch"))


class BatchSize(unittest.TestCase):
    def test_a_tensor_counts_its_first_dimension(self):
        self.assertEqual(callbacks.batch_size(FakeTensor(16, 3, 224, 224)), 16)

    def test_a_tuple_or_dict_of_tensors_counts_the_first(self):
        self.assertEqual(callbacks.batch_size((FakeTensor(8, 3), FakeTensor(8))), 8)
        self.assertEqual(callbacks.batch_size({"input_ids": FakeTensor(12, 128)}), 12)
        self.assertEqual(callbacks.batch_size([{"x": FakeTensor(5)}, None]), 5)

    def test_what_cannot_be_told_is_none(self):
        for batch in (["a", "b"], [], {}, None, 3, FakeTensor()):
            self.assertIsNone(callbacks.batch_size(batch), batch)


FRAMEWORK_MODULES = ("torch", "lightning", "pytorch_lightning", "transformers", "keras", "tensorflow", "jax")


class Imports(unittest.TestCase):
    def run_python(self, code):
        env = dict(os.environ, PYTHONPATH=os.path.dirname(HERE))
        return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)

    def test_wattwise_callbacks_imports_no_framework(self):
        code = "import sys, wattwise.callbacks; print(sorted(set(sys.modules) & set(%r)))" % (FRAMEWORK_MODULES,)
        result = self.run_python(code)
        self.assertEqual((result.returncode, result.stdout.strip()), (0, "[]"), result.stderr)

    def test_a_missing_framework_is_named_with_how_to_install_it(self):
        import importlib.util
        checked = 0
        for module, framework, package in (("lightning", "lightning", "lightning"),
                                           ("huggingface", "transformers", "transformers"),
                                           ("keras", "keras", "keras")):
            if importlib.util.find_spec(framework) is not None:
                continue
            result = self.run_python("import wattwise.%s" % module)
            self.assertNotEqual(result.returncode, 0)
            self.assertIn("pip install %s" % package, result.stderr.strip().splitlines()[-1])
            checked += 1
        if checked == 0:
            self.skipTest("lightning, transformers and keras are all installed here")


if __name__ == "__main__":
    unittest.main()
