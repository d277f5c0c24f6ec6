"""An end-to-end job whose start-up dominates its run, as a real training script's imports and data loading do.

    python3 startup_then_training.py BATCH

The larger batch starts up slower (more data to stage) but trains faster: batch 64 starts up for 0.5 s and
trains for 0.4 s (a run of 0.9 s); batch 256 starts up for 1.0 s and trains for 0.1 s (a run of 1.1 s).
On a GPU of constant power the whole run favours batch 64 and the marked training phase batch 256.
"""

import sys
import time

import wattwise


def main():
    batch = int(sys.argv[1])
    time.sleep(0.5 if batch <= 64 else 1.0)  # start-up: imports, data loading
    with wattwise.phase("training"):
        with wattwise.phase("epoch", samples=1280):
            time.sleep(25.6 / batch)


if __name__ == "__main__":
    main()
