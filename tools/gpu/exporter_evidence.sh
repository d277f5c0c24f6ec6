#!/usr/bin/env bash
# Runs on the GPU machine (device tool), READ-ONLY: the exporter only reads (it sets nothing, takes no lock),
# and the job is measured by `wattwise measure`. Expects build-gpu/bundle (tools/gpu/make_bundle.sh).
# Scrapes /metrics every second (as a 1 s Prometheus scrape would) while ResNet-50 trains for TRAIN_S seconds,
# and writes under $OUT: exporter-scrapes.csv (time, counter), exporter-measure.json (the same job measured),
# exporter-cpu.txt (the exporter's CPU over the run, from /proc), exporter-first.txt (one whole exposition).
source "$(dirname "$0")/preamble.sh"
TRAIN_S=${1:-40}
"$WW" exporter --listen 127.0.0.1:9467 > "$OUT/exporter-log.txt" 2>&1 &
EXPORTER=$!
python3 - "$OUT" "$TRAIN_S" "$WW" "$EXPORTER" <<'PY'
import json, os, subprocess, sys, threading, time, urllib.request
out, train_s, ww, exporter_pid = sys.argv[1], float(sys.argv[2]), sys.argv[3], int(sys.argv[4])
def scrape():
    return urllib.request.urlopen("http://127.0.0.1:9467/metrics", timeout=5).read().decode()
for _ in range(100):                      # wait for the server
    try: first = scrape(); break
    except Exception: time.sleep(0.1)
open(f"{out}/exporter-first.txt", "w").write(first)
def cpu_s(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
# the exporter is execed by `wattwise exporter`: the same pid
cpu0, wall0 = cpu_s(exporter_pid), time.monotonic()
rows, stop = [], threading.Event()
def scraper():
    while not stop.is_set():
        t = time.clock_gettime(time.CLOCK_MONOTONIC)
        for line in scrape().splitlines():
            if line.startswith("wattwise_gpu_energy_joules_total{"):
                rows.append((t, float(line.rsplit(" ", 1)[1])))
        stop.wait(1.0)
th = threading.Thread(target=scraper); th.start()
time.sleep(3)
subprocess.run([ww, "measure", "--json", f"{out}/exporter-measure.json", "--", "python3",
                "workloads/train_cnn.py", "--model", "resnet50", "--batch", "128",
                "--samples-per-epoch", "100000000", "--max-seconds", str(train_s)],
               stdout=open(f"{out}/exporter-measure.txt", "w"), stderr=subprocess.STDOUT)
time.sleep(3)
stop.set(); th.join()
cpu1, wall1 = cpu_s(exporter_pid), time.monotonic()
with open(f"{out}/exporter-scrapes.csv", "w") as f:
    f.write("monotonic_s,energy_joules_total\n")
    for t, e in rows: f.write(f"{t:.3f},{e:.3f}\n")
open(f"{out}/exporter-cpu.txt", "w").write(
    f"exporter cpu {cpu1-cpu0:.3f} s over {wall1-wall0:.1f} s wall: {100*(cpu1-cpu0)/(wall1-wall0):.2f}% of a core "
    f"(1 GPU, scraped every 1 s, {len(rows)} scrapes)\n")
print(open(f"{out}/exporter-cpu.txt").read())
PY
kill -TERM "$EXPORTER"; wait "$EXPORTER"; echo "exporter exit: $?" >> "$OUT/exporter-cpu.txt"
cat "$OUT/exporter-cpu.txt"; tail -5 "$OUT/exporter-log.txt"
