"""README and docs commands run as written (issue 22, Proof).

Every `wattwise ...` command line in a code block of README.md and docs/*.md is either run exactly as written
(words after `#` are a comment) against the fake NVML driver the tests use (one H100, limits 100-700 W), in a
directory of its own that holds what the docs assume is there (train.py, a sweep.db, runs.csv,
published.csv; `python` is python3), and must exit 0; or, where running it needs what a test machine has
not (a real cluster, root, a server that runs until stopped, hundreds of runs), every flag it uses must be
one that its subcommand's `--help` lists, and the reason it is not run is in NOT_RUN below. A command in the
docs that is in neither list fails the test: a new doc command is run, or given its reason.

    python3 doc_commands.py WATTWISE_BIN FAKE_NVML_LIB REPO_ROOT [--list]
"""
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

SUBCOMMANDS = {"info", "measure", "sweep", "analyze", "report", "runs", "merge", "counter", "exporter",
               "restore", "daemon", "tune"}

# Commands checked against --help only, each with why it is not run. Keyed by the command as written
# (comment removed, blanks collapsed).
NOT_RUN = {
    "wattwise sweep --power-limit 150:300:5 --repeat 5 --order random -- python train.py":
        "155 runs of the job: minutes; the same flags run in shorter sweeps here",
    "wattwise sweep --read-only --param gpus=1,2,4 --job-gpus {gpus} -- torchrun --nproc-per-node {gpus} train.py":
        "needs torchrun (PyTorch's launcher) and 4 GPUs (tests/e2e/multirank_test.cpp runs ranks)",
    "srun wattwise measure --out-dir DIR -- CMD":
        "needs a SLURM allocation (tests/slurm runs a localhost cluster)",
    "wattwise merge DIR --json job.json":
        "DIR is what `srun wattwise measure --out-dir DIR` wrote: needs SLURM (tests/slurm)",
    "wattwise sweep --slurm --nodes 1,2 --power-limit 300,400 -- CMD":
        "needs a SLURM allocation of several nodes (tests/slurm)",
    "wattwise exporter":
        "a server that runs until stopped (tests/e2e/exporter_test.cpp serves and scrapes it)",
    "wattwise exporter --listen :9467":
        "a server on every interface, until stopped (tests/e2e/exporter_test.cpp)",
    "wattwise exporter --listen 10.1.2.17:9467":
        "a server on an address this machine does not have",
    "wattwise exporter --listen [::]:9467 --gpus 0,1":
        "a server until stopped, on two GPUs (tests/e2e/exporter_test.cpp)",
    "wattwise exporter --interval 100 --hostname gpu017":
        "a server until stopped (tests/e2e/exporter_test.cpp)",
    "wattwise daemon --policy /etc/wattwise/policy.json --socket /run/wattwise/daemon.sock":
        "the settings daemon runs as root, from a systemd unit (tests/daemon)",
    "srun wattwise measure --out-dir wattwise-$SLURM_JOB_ID -- torchrun --nproc-per-node=8 train.py":
        "needs a SLURM allocation of 4 nodes of 8 GPUs, and torchrun (tests/slurm)",
    "wattwise merge wattwise-$SLURM_JOB_ID --json energy-$SLURM_JOB_ID.json":
        "needs the results of a SLURM job step (tests/slurm)",
    "srun --ntasks-per-node=8 --gpus-per-task=1 wattwise measure --out-dir wattwise-$SLURM_JOB_ID -- python train.py":
        "needs a SLURM allocation of 8 GPUs per node (tests/slurm)",
    "wattwise sweep --slurm --nodes 1,2,4 --power-limit 400,550,700 --repeat 3 --db sweep.db "
    "--srun-arg=--gres=gpu:8 -- torchrun --nnodes {nodes} --nproc-per-node=8 ... train.py":
        "needs a SLURM allocation of 4 nodes (tests/slurm)",
    "wattwise tune --knob sm-clock --range 1200:1980 -- torchrun --nproc-per-node 4 train.py":
        "needs torchrun (PyTorch's launcher) and 4 GPUs",
}

TRAIN_PY = """\
# The training script the docs run: iterations marked as docs/markers.md shows, its own flags accepted.
import argparse, os, time
import wattwise
parser = argparse.ArgumentParser()
parser.add_argument("--batch", type=int, default=64)
parser.add_argument("--epochs", type=int, default=2)
args, _ = parser.parse_known_args()
seconds = float(os.environ.get("DOC_TRAIN_SECONDS", "0.4"))
iterations = int(os.environ.get("DOC_TRAIN_ITERATIONS", "20"))
for epoch in range(args.epochs):
    with wattwise.phase("epoch"):
        for i in range(iterations):
            with wattwise.iteration(samples=args.batch):
                time.sleep(seconds / iterations / args.epochs)
"""

FAKE_CONFIG = {
    "driver_version": "580.159.04",
    "gpus": [{"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-doc-commands", "pci_bus_id": "00000000:19:00.0",
              "power_limit_w": {"min": 100, "max": 700, "default": 700, "initial": 700},
              "profile": [{"duration_s": 0.2, "watts": 400}, {"duration_s": 0.2, "watts": 300}]}],
}


def doc_commands(repo):
    """(file, line, command) for every wattwise command line in a code block; continuation lines joined."""
    found = []
    for doc in [repo / "README.md"] + sorted((repo / "docs").glob("*.md")):
        in_block = False
        pending = None
        for number, line in enumerate(doc.read_text().splitlines(), 1):
            if line.lstrip().startswith("```"):
                in_block = not in_block
                continue
            if not in_block:
                continue
            if pending is not None:
                pending = (pending[0], pending[1] + " " + line.strip())
                if not line.rstrip().endswith("\\"):
                    found.append((doc.relative_to(repo), pending[0], pending[1]))
                    pending = None
                continue
            text = line.strip()
            if text.startswith("$ "):
                text = text[2:]
            text = re.sub(r"^ExecStart=\S*/wattwise", "wattwise", text)  # a systemd unit's command
            if not re.match(r"^(srun (\S+ )*)?wattwise (\S+)", text):
                continue
            if text.split("#")[0].rstrip().endswith("\\"):
                pending = (number, text)
                continue
            found.append((doc.relative_to(repo), number, text))
    return found


def normalise(command):
    """The command without its comment (a `#` that starts a word), continuation backslashes removed."""
    command = command.replace("\\ ", " ")
    words = []
    for word in command.split():
        if word.startswith("#"):
            break
        words.append(word)
    return " ".join(words)


def help_flags(wattwise, subcommand, env):
    out = subprocess.run([wattwise, subcommand, "--help"], capture_output=True, text=True, env=env, timeout=30)
    if out.returncode != 0:
        return None
    return set(re.findall(r"(--[a-z][a-z0-9-]*)", out.stdout)) | {"--help"}


def check_flags(wattwise, command, env):
    """The problems of a command not run: an unknown subcommand or a flag its --help does not list."""
    words = shlex.split(command.split(" # ")[0].replace("$SLURM_JOB_ID", "1"))
    while words and words[0] != "wattwise":
        words.pop(0)
    if len(words) < 2 or words[1] not in SUBCOMMANDS:
        return [f"no such subcommand in {command!r}"]
    known = help_flags(wattwise, words[1], env)
    if known is None:
        return [f"`wattwise {words[1]} --help` failed"]
    problems = []
    for word in words[2:]:
        if word == "--":
            break
        if word.startswith("--"):
            flag = word.split("=")[0]
            if flag not in known:
                problems.append(f"{flag} is not in `wattwise {words[1]} --help` ({command!r})")
    return problems


def prepare(root, wattwise, env):
    """A directory with what the docs assume: train.py, sweep.db (a sweep with a failed run), runs CSVs."""
    base = root / "base"
    base.mkdir()
    (base / "train.py").write_text(TRAIN_PY)
    csv = "power_limit_w,time_s,energy_j\n" + "".join(
        f"{w},{t},{e}\n" for w, t, e in [(200, 12.0, 2400), (250, 10.5, 2500), (300, 10.0, 2800)] * 2)
    (base / "runs.csv").write_text(csv)
    (base / "published.csv").write_text(csv)
    # Two settings, each run once that succeeds and once that fails (for `runs sweep.db --failed`).
    made = subprocess.run(
        [wattwise, "sweep", "--power-limit", "200,300", "--param", "code=0,3", "--db", str(base / "sweep.db"),
         "--", "sh", "-c", "python train.py --epochs 1 && exit {code}"],
        cwd=base, env=env, capture_output=True, text=True, timeout=300)
    if made.returncode != 0:
        sys.exit(f"doc_commands: preparing sweep.db failed:\n{made.stderr}")
    return base


def main():
    wattwise, fake_nvml = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    repo = pathlib.Path(sys.argv[3]).resolve()
    commands = doc_commands(repo)
    if "--list" in sys.argv:
        for doc, line, raw in commands:
            print(f"{doc}:{line}: {normalise(raw)}")
        return 0
    with tempfile.TemporaryDirectory(prefix="ww-doc-commands-") as temporary:
        root = pathlib.Path(temporary)
        bin_dir = root / "bin"
        bin_dir.mkdir()
        (bin_dir / "python").symlink_to(sys.executable)
        (bin_dir / "wattwise").symlink_to(wattwise)
        (root / "fake_nvml.json").write_text(json.dumps(FAKE_CONFIG))
        env = {
            "PATH": f"{bin_dir}:/usr/bin:/bin",
            "HOME": str(root),
            "LANG": "C.UTF-8",
            "TMPDIR": str(root),
            "WATTWISE_NVML_LIB": fake_nvml,
            "WATTWISE_FAKE_NVML_CONFIG": str(root / "fake_nvml.json"),
            "WATTWISE_STATE_DIR": str(root / "state"),
            "XDG_CONFIG_HOME": str(root / "config"),
            "PYTHONPATH": str(repo / "python"),
        }
        # The check itself catches a flag that is not there, and a subcommand that is not.
        if not check_flags(wattwise, "wattwise exporter --no-such-flag", env) or \
                not check_flags(wattwise, "wattwise no-such-command", env):
            sys.exit("doc_commands: the --help check let a wrong command through")
        base = prepare(root, wattwise, env)
        failures, ran, checked = [], 0, 0
        written = {normalise(raw) for _, _, raw in commands}
        failures += [f"NOT_RUN names a command no doc has any more: {c!r}" for c in NOT_RUN if c not in written]
        for doc, line, raw in commands:
            command = normalise(raw)
            where = f"{doc}:{line}"
            if command in NOT_RUN:
                problems = check_flags(wattwise, command, env)
                checked += 1
                failures += [f"{where}: {p}" for p in problems]
                print(f"checked {where}: {command}  -- not run: {NOT_RUN[command]}"
                      + ("" if not problems else "  FAILED"), flush=True)
                continue
            work = root / f"run-{ran}"
            shutil.copytree(base, work)
            (work / "sweep.db").unlink() if "--db sweep.db" in command else None
            result = subprocess.run(shlex.split(command), cwd=work, env=env, capture_output=True, text=True,
                                    timeout=300)
            ran += 1
            status = "ok" if result.returncode == 0 else f"FAILED (exit {result.returncode})"
            print(f"ran {where}: {command}  -- {status}", flush=True)
            if result.returncode != 0:
                failures.append(f"{where}: {command!r} exited {result.returncode}:\n{result.stderr[-2000:]}")
        print(f"\n{len(commands)} doc commands: {ran} run as written, {checked} checked against --help; "
              f"{len(failures)} failed")
        for failure in failures:
            print("FAIL " + failure)
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
