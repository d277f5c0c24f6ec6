"""How a window's in-process answer compares with the exact energy and with the report's phase instance, on
the fake NVML driver (docs/windows.md). Runs python/tests/test_window.py's job under the real binary N times:

    python3 bench/window_agreement.py build/src/cli/wattwise build/fake_nvml/libnvidia-ml.so.1 [N] [measure|tune]

Prints one line per window: the answer, the exact energy (from the fake's profile), the report's phase
instance (reconciled to the counter), and the deviations in percent; then the largest deviations."""

import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "tests"))
binary, fake, runs = sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 5
command = ["tune", "--dry-run"] if len(sys.argv) > 4 and sys.argv[4] == "tune" else ["measure"]
os.environ["WATTWISE_TEST_BIN"], os.environ["WATTWISE_TEST_FAKE_NVML"] = os.path.abspath(binary), os.path.abspath(fake)
import test_window  # noqa: E402  (reads the two variables above)

worst_exact, worst_report = 0.0, 0.0
print("%-5s %-9s %10s %10s %10s %9s %9s" % ("run", "window", "answer_j", "exact_j", "report_j", "vs_exact", "vs_report"))
for run_number in range(runs):
    with tempfile.TemporaryDirectory(prefix="ww-window-bench-") as directory:
        answers_path, report = os.path.join(directory, "a.json"), os.path.join(directory, "run.json")
        result = test_window.run_wattwise(directory, command + ["--json", report], [answers_path])
        if result.returncode not in (0, 4):
            sys.exit(result.stderr)
        answers, run = json.load(open(answers_path)), json.load(open(report))
    epochs = [p for p in run["phase_instances"] if p["name"] == "epoch"]
    for k, (answer, phase) in enumerate(zip(answers[:3], epochs)):
        exact = sum(test_window.exact_energy_j(g, answer["begin_ns"], answer["end_ns"]) for g in (0, 1))
        vs_exact = 100 * (answer["energy_j"] / exact - 1)
        vs_report = 100 * (answer["energy_j"] / phase["energy_j"] - 1)
        worst_exact, worst_report = max(worst_exact, abs(vs_exact)), max(worst_report, abs(vs_report))
        print("%-5d epoch%-4d %10.2f %10.2f %10.2f %8.3f%% %8.3f%%" % (run_number, k, answer["energy_j"], exact,
                                                                   phase["energy_j"], vs_exact, vs_report))
print("largest |answer - exact|: %.3f%%   largest |answer - report|: %.3f%%" % (worst_exact, worst_report))
