#include "measure/live_status.hpp"

#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "core/units.hpp"
#include "measure/job_watchers.hpp"
#include "sampling/sampler.hpp"

namespace wattwise::measure {

namespace {

double seconds(Nanos t) {
  return std::chrono::duration<double>(t).count();
}

// One GPU's power readings (samples if it has any in the window, else instantaneous power) integrated over
// [t0, t1], each reading held until the next; and its newest reading.
WindowReading one_gpu(const std::vector<sampling::PowerReading>& readings, Nanos t0, Nanos t1) {
  WindowReading r;
  double joules = 0;
  bool any = false;
  for (std::size_t i = 0; i < readings.size(); ++i) {
    const Nanos from = std::max(readings[i].t, t0);
    const Nanos to = std::min(i + 1 < readings.size() ? readings[i + 1].t : t1, t1);
    if (readings[i].t <= t1) r.power_w = readings[i].power_w;
    if (to <= from) continue;
    joules += readings[i].power_w * seconds(to - from);
    any = true;
  }
  if (any) r.energy_j = joules;
  return r;
}

}  // namespace

std::string status_text(const LiveStatus& status) {
  return fmt::format("elapsed {} | {} so far | {} now", format_seconds(status.elapsed_s),
                     format_energy_j(status.energy_j), format_power_w(status.power_w));
}

WindowReading live_window(const std::vector<sampling::GpuTrace>& traces, Nanos t0, Nanos t1) {
  WindowReading total{0.0, 0.0};
  for (const auto& trace : traces) {
    const auto& source = trace.power_samples.empty() ? trace.power_instant : trace.power_samples;
    const WindowReading gpu = one_gpu(source, t0, t1);
    if (!gpu.energy_j) total.energy_j.reset();
    if (total.energy_j && gpu.energy_j) *total.energy_j += *gpu.energy_j;
    if (!gpu.power_w) total.power_w.reset();
    if (total.power_w && gpu.power_w) *total.power_w += *gpu.power_w;
  }
  return total;
}

JobWatcher status_line_watcher(std::FILE* out, Nanos period) {
  return named_watcher("the live status line",
                       [out, period](const LiveJob& job, const std::atomic<bool>& job_ended) {
                         LiveStatus status;
                         status.energy_j = 0.0;
                         Nanos last = job.job_start;
                         bool printed = false;
                         while (!job_ended) {
                           const Nanos until = job.clock.now() + period;
                           while (!job_ended && job.clock.now() < until)
                             std::this_thread::sleep_for(std::chrono::milliseconds(50));
                           if (job_ended) break;
                           const Nanos now = job.clock.now();
                           std::vector<sampling::GpuTrace> traces = job.sampler.snapshot_since(last);
                           std::vector<sampling::GpuTrace> job_traces;
                           for (std::size_t k : job.job_gpus)
                             if (k < traces.size()) job_traces.push_back(std::move(traces[k]));
                           const WindowReading window = live_window(job_traces, last, now);
                           if (status.energy_j && window.energy_j) {
                             *status.energy_j += *window.energy_j;
                           } else {
                             status.energy_j.reset();  // a GPU without power readings: the sum would mislead
                           }
                           status.power_w = window.power_w;
                           status.elapsed_s = seconds(now - job.job_start);
                           last = now;
                           std::fprintf(out, "\r wattwise: %s\033[K", status_text(status).c_str());
                           std::fflush(out);
                           printed = true;
                         }
                         if (printed) {
                           std::fputs("\r\033[K", out);  // the summary follows on a clean line
                           std::fflush(out);
                         }
                       });
}

}  // namespace wattwise::measure
