"""Tests of wattwise.tuning_state() and wattwise.current_setting(): the job's view of `wattwise tune`."""

import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import wattwise  # noqa: E402

STATE = {"phase": "settled", "knob": "power-limit", "unit": "W", "value": 250.0, "captured_value": 700.0,
         "settled": 250.0, "dry_run": False, "iterations": 900, "profiling_iterations": 120, "decisions": 9}


class TuningState(unittest.TestCase):
    def setUp(self):
        self.saved = os.environ.pop(wattwise.TUNING_STATE_VARIABLE, None)
        self.directory = tempfile.TemporaryDirectory(prefix="ww-py-state-")
        self.path = os.path.join(self.directory.name, "tuning.json")

    def tearDown(self):
        os.environ.pop(wattwise.TUNING_STATE_VARIABLE, None)
        if self.saved is not None:
            os.environ[wattwise.TUNING_STATE_VARIABLE] = self.saved
        self.directory.cleanup()

    def test_without_wattwise_tune_both_are_none(self):
        self.assertIsNone(wattwise.tuning_state())
        self.assertIsNone(wattwise.current_setting())

    def test_reads_the_state_wattwise_wrote(self):
        with open(self.path, "w", encoding="utf-8") as f:
            json.dump(STATE, f)
        os.environ[wattwise.TUNING_STATE_VARIABLE] = self.path
        self.assertEqual(wattwise.tuning_state(), STATE)
        self.assertEqual(wattwise.current_setting(), 250.0)

    def test_reads_each_time_so_a_new_decision_is_seen(self):
        os.environ[wattwise.TUNING_STATE_VARIABLE] = self.path
        for value in (400.0, 325.0):
            with open(self.path, "w", encoding="utf-8") as f:
                json.dump(dict(STATE, value=value), f)
            self.assertEqual(wattwise.current_setting(), value)

    def test_a_missing_or_unreadable_file_is_none_never_an_exception(self):
        os.environ[wattwise.TUNING_STATE_VARIABLE] = self.path  # not written (yet)
        self.assertIsNone(wattwise.tuning_state())
        with open(self.path, "w", encoding="utf-8") as f:
            f.write("{not json")
        self.assertIsNone(wattwise.tuning_state())
        self.assertIsNone(wattwise.current_setting())


if __name__ == "__main__":
    unittest.main()
