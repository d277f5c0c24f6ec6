"""A fit marked by the callbacks' hooks, run under the real `wattwise measure` with the fake NVML driver:
wattwise pairs every marker and reports the phases, with the iterations' samples, and answers each epoch's
energy, which the callback logs into the module (docs/windows.md).

ctest passes the binary and the fake driver (WATTWISE_TEST_BIN, WATTWISE_TEST_FAKE_NVML); run on its own,
without them, the test skips."""

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.dirname(HERE)

BINARY = os.environ.get("WATTWISE_TEST_BIN")
FAKE_NVML = os.environ.get("WATTWISE_TEST_FAKE_NVML")

# One GPU at a constant 200 W, so each phase's energy is 200 W times its time.
FAKE_GPU = {"driver_version": "580.159.04",
            "gpus": [{"name": "NVIDIA H100 PCIe", "uuid": "GPU-python-callbacks", "pci_bus_id": "00000000:3B:00.0",
                      "power_limit_w": {"min": 150, "max": 350, "default": 310, "initial": 320},
                      "profile": [{"duration_s": 1.0, "watts": 200}]}]}

# Lightning's hook order for 2 epochs of 5 batches of 16 samples, each epoch validated.
JOB = textwrap.dedent("""
    import json
    import sys
    import time
    from types import SimpleNamespace
    from wattwise.callbacks import LightningHooks

    class Batch:
        shape = (16, 3, 32, 32)

    class Module:  # what the callback logs into (Lightning's LightningModule.log)
        logged = []

        def log(self, key, value):
            self.logged.append([key, value])

    callback, trainer, module = LightningHooks(), SimpleNamespace(current_epoch=0, sanity_checking=False), Module()
    callback.on_train_start(trainer, None)
    for epoch in range(2):
        trainer.current_epoch = epoch
        callback.on_train_epoch_start(trainer, None)
        for index in range(5):
            callback.on_train_batch_start(trainer, None, (Batch(),), index)
            time.sleep(0.04)
            callback.on_train_batch_end(trainer, None, None, (Batch(),), index)
        callback.on_validation_start(trainer, None)
        time.sleep(0.1)
        callback.on_validation_end(trainer, None)
        callback.on_train_epoch_end(trainer, module)
    callback.on_train_end(trainer, None)
    with open(sys.argv[1], "w") as out:
        json.dump(module.logged, out)
""")


@unittest.skipUnless(BINARY and FAKE_NVML, "run by ctest, which sets WATTWISE_TEST_BIN and WATTWISE_TEST_FAKE_NVML "
                     "to the built wattwise and fake NVML driver")
class CallbacksUnderMeasure(unittest.TestCase):
    def test_measure_reports_the_phases_the_hooks_marked_and_each_epochs_energy_is_logged(self):
        with tempfile.TemporaryDirectory(prefix="ww-py-measure-") as directory:
            config, job, report, logged_path = (os.path.join(directory, name)
                                                for name in ("fake.json", "job.py", "run.json", "logged.json"))
            with open(config, "w") as out:
                json.dump(FAKE_GPU, out)
            with open(job, "w") as out:
                out.write(JOB)
            env = dict(os.environ, WATTWISE_NVML_LIB=FAKE_NVML, WATTWISE_FAKE_NVML_CONFIG=config,
                       PYTHONPATH=PYTHON_DIR, TMPDIR=directory)
            result = subprocess.run([BINARY, "measure", "--json", report, "--", sys.executable, job, logged_path],
                                    env=env, capture_output=True, text=True, timeout=120)
            self.assertEqual(result.returncode, 0, result.stderr)
            with open(report) as source:
                run = json.load(source)
            with open(logged_path) as source:
                logged = json.load(source)
        self.assertEqual((run["markers"]["received"], run["markers"]["unmatched"], run["markers"]["malformed"]),
                         (2 + 2 * (2 + 10 + 2), 0, 0))
        phases = {phase["name"]: phase for phase in run["phases"]}
        self.assertEqual({name: phases[name]["count"] for name in phases},
                         {"training": 1, "epoch": 2, "iteration": 10, "evaluation": 2})
        self.assertEqual(phases["iteration"]["samples"], 160)
        self.assertGreaterEqual(phases["evaluation"]["time_s"], 0.2)
        self.assertLess(phases["evaluation"]["time_s"], phases["epoch"]["time_s"])
        for phase in phases.values():  # the fake GPU draws a constant 200 W
            self.assertAlmostEqual(phase["energy_j"] / phase["time_s"], 200.0, delta=10.0)

        # The energy of each epoch, asked of the running wattwise (docs/windows.md), logged into the module:
        # the epoch's phase instance in the report, from the same samples (within 1% plus one 100 ms posting
        # at 200 W that the report's reconciliation may misplace on a loaded machine).
        epochs = [p["energy_j"] for p in run["phase_instances"] if p["name"] == "epoch"]
        self.assertEqual([key for key, _ in logged], ["wattwise/epoch_energy_j"] * 2)
        for (_, energy_j), reported_j in zip(logged, epochs):
            self.assertAlmostEqual(energy_j, reported_j, delta=0.01 * reported_j + 200 * 0.1)


if __name__ == "__main__":
    unittest.main()
