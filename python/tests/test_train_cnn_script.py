"""The training workload's command line, checked without a GPU (and, here, usually without torch)."""

import importlib.util
import os
import subprocess
import sys
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "workloads", "train_cnn.py")


def load_script():
    spec = importlib.util.spec_from_file_location("train_cnn", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class TrainCnnScript(unittest.TestCase):
    def test_help_works_without_torch(self):
        result = subprocess.run([sys.executable, SCRIPT, "--help"], capture_output=True, text=True)
        self.assertEqual(result.returncode, 0)
        self.assertIn("--mark-forward-backward", result.stdout)

    @unittest.skipIf(importlib.util.find_spec("torch") is not None, "torch is installed here")
    def test_without_torch_it_says_so_in_one_line_and_exits_3(self):
        result = subprocess.run([sys.executable, SCRIPT, "--quick"], capture_output=True, text=True)
        self.assertEqual(result.returncode, 3)
        self.assertEqual(len(result.stderr.strip().splitlines()), 1)
        self.assertIn("needs PyTorch", result.stderr)
        self.assertEqual(result.stdout, "")

    def test_defaults_follow_the_papers_and_quick_reduces_them(self):
        script = load_script()
        self.assertEqual(script.parse_arguments([]).samples_per_epoch, 100000)
        quick = script.parse_arguments(["--quick", "--model", "inception_v3"])
        self.assertEqual(quick.samples_per_epoch, 6400)
        self.assertEqual(quick.model, "inception_v3")
        self.assertEqual(script.parse_arguments(["--quick", "--samples-per-epoch", "256"]).samples_per_epoch, 256)

    def test_unknown_model_is_a_usage_error(self):
        result = subprocess.run([sys.executable, SCRIPT, "--model", "lenet"], capture_output=True, text=True)
        self.assertEqual(result.returncode, 2)


if __name__ == "__main__":
    unittest.main()
