import json, sys, time
import torch
import wattwise

a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)

def busy(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for _ in range(8):
            a @ b
        torch.cuda.synchronize()

answers = []
busy(3.0)  # warm up: clocks and power settle before the first window
for length_s in [2.0] * 6 + [0.5] * 8:
    for load in ("busy", "idle"):
        with wattwise.window("%s-%gs" % (load, length_s)) as w:
            busy(length_s) if load == "busy" else time.sleep(length_s)
        asked = time.monotonic()
        answers.append({"name": w.name, "begin_ns": w.begin_ns, "end_ns": w.end_ns, "energy_j": w.energy_j,
                        "per_gpu": w.energy_per_gpu_j, "method": w.method, "reason": w.reason,
                        "waited_s": time.monotonic() - asked})
json.dump(answers, open(sys.argv[1], "w"), indent=1)
