#!/usr/bin/env python3
"""Runs a command with a marker socket, as wattwise does, and summarises the phases it marked.

A check of a job's markers without wattwise or a GPU driver:

    python3 workloads/collect_markers.py [--json FILE] -- python3 workloads/train_cnn.py --quick

Prints per phase name: count, total and mean seconds, summed counters; exits with the job's exit code.
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading


def decode_name(text):
    raw = bytearray()
    i = 0
    while i < len(text):
        if text[i] == "%":
            raw.append(int(text[i + 1:i + 3], 16))
            i += 3
        else:
            raw.extend(text[i].encode("utf-8"))
            i += 1
    return raw.decode("utf-8")


def summarise(messages):
    open_begins, phases = {}, {}
    for message in messages:
        fields = message.split(" ")
        kind, t_ns, name = fields[1], int(fields[2]), decode_name(fields[3])
        extra = dict(field.split("=", 1) for field in fields[4:])
        key = (extra.get("pid"), extra.get("rank"), name)
        counters = {k: float(v) for k, v in extra.items() if k not in ("pid", "rank")}
        if kind == "B":
            open_begins.setdefault(key, []).append(t_ns)
            continue
        begin = t_ns
        if kind == "E":
            if not open_begins.get(key):
                continue
            begin = open_begins[key].pop()
        entry = phases.setdefault(name, {"count": 0, "seconds": 0.0, "counters": {}})
        entry["count"] += 1
        entry["seconds"] += (t_ns - begin) / 1e9
        for k, v in counters.items():
            entry["counters"][k] = entry["counters"].get(k, 0.0) + v
    return phases


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", help="write the summary as JSON to this file")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command after --")

    messages = []
    with tempfile.TemporaryDirectory(prefix="wattwise-") as directory:
        path = os.path.join(directory, "markers.sock")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind(path)
        sock.settimeout(0.2)
        done = threading.Event()

        def receive():
            while not done.is_set():
                try:
                    messages.append(sock.recv(8192).decode("utf-8"))
                except socket.timeout:
                    pass

        receiver = threading.Thread(target=receive)
        receiver.start()
        exit_code = subprocess.call(command, env=dict(os.environ, WATTWISE_SOCKET=path))
        done.set()
        receiver.join()

    phases = summarise(messages)
    for name, entry in sorted(phases.items(), key=lambda item: -item[1]["seconds"]):
        counters = " ".join("%s=%g" % kv for kv in sorted(entry["counters"].items()))
        sys.stderr.write("%-12s x%-6d %9.3f s  mean %8.4f s  %s\n" %
                         (name, entry["count"], entry["seconds"], entry["seconds"] / entry["count"], counters))
    sys.stderr.write("%d markers\n" % len(messages))
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"markers": len(messages), "phases": phases, "exit_code": exit_code}, out, indent=1)
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
