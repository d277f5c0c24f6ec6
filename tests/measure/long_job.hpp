#pragma once

// A long training job on simulated GPUs in virtual time, measured as `measure` does (the sampler with its
// default compaction, the markers' instants as its window edges) with or without the phase folding of
// measure/phase_folding.hpp: the unit tests and bench/long_job.cpp compare the two.
//
// Each rank r marks `iterations_per_s` iterations a second ("iteration", rank r, charged to GPU r), each
// 70-84% of the period long and begun 0-15% of it late; its GPU draws 300-400 W inside them (the level set per iteration) and 120 W between, with a
// +-2% wobble per 10 ms. The job also marks "train" (begin at 0.5 s, end 0.5 s before its end) and an
// "epoch" every `epoch`, both without a rank (every GPU). Telemetry changes at every reading (clocks and
// temperature follow the power), as a real GPU's does. Power is piecewise constant on 10 ms bins, so the
// simulated GPU's counter and samples cost a few additions each: 30 days of 8 GPUs run in minutes.

#include <chrono>
#include <cstddef>
#include <vector>

#include "core/clock.hpp"
#include "core/running_stats.hpp"
#include "measure/measurement.hpp"
#include "measure/phase_folding.hpp"
#include "../support/training_gpu.hpp"

namespace wattwise::measure::testing {

using namespace std::chrono_literals;

// The simulated GPUs post their counter every kLongJobPosting, at kLongJobPostingPhase + n * kLongJobPosting
// (tests/support/training_gpu.hpp).
inline constexpr Nanos kLongJobPosting = wattwise::testing::training::kTrainingGpuPosting;
inline constexpr Nanos kLongJobPostingPhase = wattwise::testing::training::kTrainingGpuPostingPhase;

struct LongJobConfig {
  std::size_t gpus = 2;
  Nanos duration = 30min;
  double iterations_per_s = 10;
  Nanos epoch = 6h;
  bool fold = true;  // false: every marker and reading kept to the end (the unbounded computation)
  PhaseFoldingConfig folding;
  Nanos fold_period = kFoldPeriod;
  Nanos fast_period = 20ms;       // the sampler's instantaneous power
  Nanos telemetry_period = 100ms;
  // A busy node in every other minute (the odd ones): a counter read then is held up past the posting
  // before it (its call began 1 ms before that posting, where the one sampling thread was free: no read of
  // any GPU returned after that) and returns the value from before it, as runs of
  // reads did on a loaded H100 (docs/evidence/energy-checks.md). Applied to the traces the folds and the
  // final accounting see, not to the sampler's own schedule.
  bool held_up_reads = false;
};

struct LongJobResult {
  Measurement m;
  // After each fold (every fold_period): markers held by the folder, and readings kept by the sampler
  // (summed over GPUs: counter reads, samples, instantaneous powers, telemetry).
  std::vector<std::size_t> pending_markers;
  std::vector<std::size_t> kept_readings;
  double max_rss_mib = 0;  // the process's peak resident set when the job ended (before accounting)
  RunningStats true_iteration_j;  // the simulated GPUs' own energy over each iteration (the truth)
};

LongJobResult run_long_job(const LongJobConfig& config);

}  // namespace wattwise::measure::testing
