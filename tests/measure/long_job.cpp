#include "long_job.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "hw/gpu.hpp"
#include "../support/training_gpu.hpp"
#include "measure/attribution.hpp"
#include "measure/session.hpp"
#include "sampling/sampler.hpp"
#include "sampling/virtual_driver.hpp"
#include "workload/phases.hpp"

namespace wattwise::measure::testing {
namespace {

using wattwise::testing::training::Iteration;
using wattwise::testing::training::Schedule;
using wattwise::testing::training::TrainingGpu;

double max_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

workload::Marker marker(Nanos t, workload::MarkerKind kind, const char* name, int pid, std::optional<int> rank) {
  return workload::Marker{.t = t, .kind = kind, .name = name, .counters = {}, .pid = pid, .rank = rank,
                          .dropped_before = std::nullopt};
}

// LongJobConfig::held_up_reads on the GPUs' traces (copies: the sampler's own store is left as it read).
// One thread reads every GPU's counter, so a call held up from 1 ms before a posting keeps the thread: the
// reads are taken in the order they returned, all GPUs together, and one is held up only where no read of
// any GPU returned after its call would have begun (else the calls overlap: where the GPUs' postings
// coincide, each GPU's first read after a posting was held up over the others', 1200 overlapping pairs in
// 40 minutes on 2 GPUs).
void hold_up_reads(std::vector<sampling::GpuTrace>& traces, const std::vector<std::unique_ptr<TrainingGpu>>& gpus) {
  using wattwise::testing::training::kTrainingGpuPosting;
  using wattwise::testing::training::kTrainingGpuPostingPhase;
  const std::size_t n = std::min(traces.size(), gpus.size());
  std::vector<std::pair<Nanos, std::pair<std::size_t, std::size_t>>> order;  // (returned, (GPU, read))
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < traces[i].energy.size(); ++k) order.push_back({traces[i].energy[k].t, {i, k}});
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  Nanos previous_end = Nanos::min();  // the last read of any GPU to return
  std::vector<std::uint64_t> previous_value(n, 0);
  for (const auto& [returned, at] : order) {
    const auto [i, k] = at;
    sampling::CounterReading& read = traces[i].energy[k];
    const Nanos posted =
        kTrainingGpuPostingPhase + (read.t - kTrainingGpuPostingPhase) / kTrainingGpuPosting * kTrainingGpuPosting;
    // The first read after a posting, within 20 ms of it (the H100's held-up calls took ~15 ms), whose
    // call can have begun 1 ms before the posting without overlapping the read before it, of any GPU.
    if (read.t >= 1min && (read.t / 1min) % 2 == 1 && read.t - posted <= 20ms && previous_end < posted - 1ms) {
      const double increment_j = gpus[i]->energy_j(posted - kTrainingGpuPosting, posted);
      read.read_cost = read.t - posted + 1ms;
      // The value posted a period before: the GPU's sum rounds once, this difference twice, so it may land
      // 1 mJ under the read before it; a counter never goes down.
      read.energy_mj = std::max(previous_value[i],
                                read.energy_mj - static_cast<std::uint64_t>(std::llround(increment_j * 1000)));
    }
    previous_end = std::max(previous_end, returned);
    previous_value[i] = read.energy_mj;
  }
}

}  // namespace

LongJobResult run_long_job(const LongJobConfig& config) {
  LongJobResult result;
  VirtualClock clock(0ns);
  const Nanos job_end = config.duration;
  std::vector<Schedule> schedules;
  for (std::size_t r = 0; r < config.gpus; ++r) schedules.emplace_back(config.iterations_per_s, r);
  std::vector<std::unique_ptr<TrainingGpu>> devices;
  std::vector<hw::GpuReadings*> gpus;
  for (std::size_t r = 0; r < config.gpus; ++r) {
    devices.push_back(std::make_unique<TrainingGpu>(clock, schedules[r], r, job_end));
    gpus.push_back(devices.back().get());
  }

  Measurement& m = result.m;
  m.backend = "simulated";
  std::vector<std::size_t> job_gpus;
  for (std::size_t r = 0; r < config.gpus; ++r) {
    m.gpus.push_back(gpus[r]->identity());
    GpuEnergy e;
    e.gpu = gpus[r]->identity();
    m.gpu_energy.push_back(e);
    job_gpus.push_back(r);
  }

  sampling::SamplerConfig sampler_config;  // as `measure` samples a real GPU
  sampler_config.fast_period = config.fast_period;
  sampler_config.telemetry_period = config.telemetry_period;
  sampling::Sampler sampler(gpus, clock, sampler_config);
  PhaseFoldingConfig folding = config.folding;
  if (!config.fold) folding.fold_after_markers = static_cast<std::size_t>(-1);
  PhaseFolder folder(job_gpus, config.gpus, folding);
  // The receiver's marker instants (marker_times_between): where the fine compaction keeps every sample.
  std::deque<Nanos> marker_times;
  sampler.set_window_edges([&marker_times](Nanos from, Nanos to) {
    return std::vector<Nanos>(std::lower_bound(marker_times.begin(), marker_times.end(), from),
                              std::upper_bound(marker_times.begin(), marker_times.end(), to));
  });
  sampler.set_coarse_edges([&folder](Nanos from, Nanos to) { return folder.open_begins(from, to); });

  // The job's events: each rank's next iteration edge, train and epoch edges, the folding's ticks.
  struct RankCursor {
    std::int64_t k = 0;
    bool at_end = false;  // the next event is iteration k's end
  };
  std::vector<RankCursor> cursors(config.gpus);
  const Nanos last_begin = job_end - 1s;  // no iteration begins in the job's last second
  std::vector<workload::Marker> heard;
  const Nanos train_begin = 500ms, train_end = job_end - 500ms;
  Nanos next_epoch_edge = train_begin + 500ms;  // epoch e begins at e * epoch + 1 s
  bool epoch_open = false;
  Nanos next_fold = config.fold_period;
  bool train_begun = false, train_ended = false, ended = false, tail_done = false;

  auto rank_due = [&](std::size_t r) -> Nanos {
    const RankCursor& c = cursors[r];
    const Iteration it = schedules[r].at(c.k);
    if (!c.at_end) return it.begin > last_begin ? Nanos::max() : it.begin;
    return it.end;
  };
  auto next_event = [&]() -> std::optional<Nanos> {
    if (ended) return tail_done ? std::nullopt : std::optional<Nanos>(job_end + 250ms);
    Nanos next = job_end;
    if (!train_begun) next = std::min(next, train_begin);
    if (!train_ended) next = std::min(next, train_end);
    if (next_epoch_edge < train_end) next = std::min(next, next_epoch_edge);
    for (std::size_t r = 0; r < config.gpus; ++r) next = std::min(next, rank_due(r));
    return std::min(next, next_fold);
  };
  auto hear = [&](workload::Marker mk) {
    marker_times.push_back(mk.t);
    heard.push_back(std::move(mk));
  };
  auto run_event = [&](Nanos now) {
    if (ended) {
      tail_done = true;  // the sampler ran on 250 ms past the end, as `measure` does
      return;
    }
    if (!train_begun && now >= train_begin) {
      hear(marker(now, workload::MarkerKind::kBegin, "train", 1, std::nullopt));
      train_begun = true;
    }
    while (next_epoch_edge <= now && next_epoch_edge < train_end) {
      hear(marker(now, epoch_open ? workload::MarkerKind::kEnd : workload::MarkerKind::kBegin, "epoch", 1,
                  std::nullopt));
      // An epoch ends 1 s before the next begins.
      next_epoch_edge = epoch_open ? next_epoch_edge + 1s : next_epoch_edge + config.epoch - 1s;
      epoch_open = !epoch_open;
    }
    for (std::size_t r = 0; r < config.gpus; ++r) {
      while (rank_due(r) <= now) {
        RankCursor& c = cursors[r];
        const int rank = static_cast<int>(r);
        if (!c.at_end) {
          hear(marker(now, workload::MarkerKind::kBegin, "iteration", 100 + rank, rank));
        } else {
          workload::Marker end = marker(now, workload::MarkerKind::kEnd, "iteration", 100 + rank, rank);
          end.counters["samples"] = 64;
          const Iteration it = schedules[r].at(c.k);
          result.true_iteration_j.add(devices[r]->energy_j(it.begin, it.end));
          hear(std::move(end));
          ++c.k;
        }
        c.at_end = !c.at_end;
      }
    }
    if (!train_ended && now >= train_end) {
      if (epoch_open) hear(marker(now, workload::MarkerKind::kEnd, "epoch", 1, std::nullopt));
      epoch_open = false;
      hear(marker(now, workload::MarkerKind::kEnd, "train", 1, std::nullopt));
      train_ended = true;
    }
    if (now >= next_fold) {
      next_fold += config.fold_period;
      folder.add(std::exchange(heard, {}));
      const auto coarsen =
          folder.fold(now, [&](Nanos since) {
            auto traces = sampler.snapshot_since(since);
            if (config.held_up_reads) hold_up_reads(traces, devices);
            return traces;
          });
      if (coarsen) {
        sampler.coarsen_before(*coarsen);
        while (!marker_times.empty() && marker_times.front() < *coarsen) marker_times.pop_front();
      }
      result.pending_markers.push_back(folder.pending_count());
      result.kept_readings.push_back(sampler.kept_readings());
    }
    if (now >= job_end) ended = true;
  };

  m.job_start = clock.now();
  sampling::VirtualDriver driver(sampler, clock);
  driver.run_until(Nanos::max(), {next_event, run_event});
  m.job_end = job_end;
  folder.add(std::exchange(heard, {}));
  result.max_rss_mib = max_rss_mib();
  m.traces = sampler.take_traces();
  if (config.held_up_reads) hold_up_reads(m.traces, devices);
  m.markers = folder.take_pending();
  m.folded = folder.take_folded();
  auto phases = workload::build_phases(m.markers);
  m.phases = std::move(phases.phases);
  m.unmatched_markers = static_cast<std::size_t>(phases.unmatched_begins + phases.unmatched_ends) +
                        (m.folded ? m.folded->unmatched_ends : 0);
  account(m);
  return result;
}

}  // namespace wattwise::measure::testing
