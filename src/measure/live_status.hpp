#pragma once

// The line `measure` keeps on a terminal while the job runs (issue 15): elapsed time, the job GPUs' energy so
// far and their power now, rewritten in place once a second. An estimate for people (the 20 ms samples, else
// the instantaneous power, integrated as they arrive); the summary at the end is the measurement.

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.hpp"
#include "measure/session.hpp"
#include "sampling/trace.hpp"

namespace wattwise::measure {

struct LiveStatus {
  double elapsed_s = 0;
  std::optional<double> energy_j;  // since the job started, summed over the job's GPUs
  std::optional<double> power_w;   // the newest reading, summed over the job's GPUs
};

// "elapsed 12.3 s | 4.56 kJ so far | 312.0 W now"; absent figures read "n/a".
std::string status_text(const LiveStatus& status);

// The energy of `traces` (the job's GPUs) in [t0, t1] from their 20 ms samples, else their instantaneous
// power, each held from its time stamp (rectangles: readings arrive in order, none is waited for); nullopt
// when a GPU has neither in the window. Also the newest power reading at or before t1, summed.
struct WindowReading {
  std::optional<double> energy_j;
  std::optional<double> power_w;
};
WindowReading live_window(const std::vector<sampling::GpuTrace>& traces, Nanos t0, Nanos t1);

// A JobWatcher that writes the status line to `out` every `period` ("\r...\033[K"), and ends the line when
// the job ends. Each tick copies only the readings since the previous one.
JobWatcher status_line_watcher(std::FILE* out, Nanos period = std::chrono::seconds(1));

}  // namespace wattwise::measure
