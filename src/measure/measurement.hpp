#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/clock.hpp"
#include "core/running_stats.hpp"
#include "hw/gpu.hpp"
#include "measure/node_energy.hpp"
#include "sampling/sampler_cost.hpp"
#include "sampling/trace.hpp"
#include "workload/marker.hpp"
#include "workload/output_tail.hpp"

namespace wattwise::measure {

// How the job ended. exit_code follows the shell's convention: 128+N when killed by signal N.
struct JobOutcome {
  int exit_code = 0;
  std::optional<int> signal;
  bool timed_out = false;
};

// Energy of one GPU over the job's whole run.
struct GpuEnergy {
  hw::GpuIdentity gpu;
  bool used_by_job = true;  // false: present and sampled, but no rank of the job ran on it (idle energy)
  bool via_mig = false;     // the job saw it through a MIG device: energy_j is the whole GPU's
  std::optional<double> energy_j;
  double energy_uncertainty_j = 0;  // energy_j's error bar (+-), sampling::WindowEnergy::uncertainty_j
  sampling::EnergyMethod method = sampling::EnergyMethod::kNone;
  std::optional<double> avg_power_w;  // over the span energy_j covers
  std::optional<double> peak_power_w;
  // Set when the GPU was lost (or its readings kept failing) during the run: it was not read again, and
  // energy_j, avg_power_w and peak_power_w cover only [job_start, covered_until].
  std::optional<sampling::SourceFailure> failure;
  Nanos covered_until{0};
  std::uint64_t failed_readings = 0;  // single readings lost to momentary driver errors (counted, not fatal)
  // The highest power limit the GPU accepts (read before the job): no average over a posting period or
  // more can exceed it. Absent when the driver does not say.
  std::optional<double> power_limit_max_w;
  // A check failed (measure/energy_checks.hpp): every figure of this GPU is the counter alone, read by read.
  bool counter_only = false;
  // The sampler did not get the CPU when it asked (a starved node): its counter reads came late, or the
  // posting grid was learnt only after the job (or never). Figures stand, with wider bars and a warning.
  std::uint64_t late_counter_reads = 0;
  Nanos max_counter_read_delay{0};
  std::uint64_t held_up_counter_reads = 0;  // calls that lasted sampling::kHeldUpCounterRead or more
  Nanos max_counter_read_call{0};           // the longest counter read's call
  // Stretches whose buffered samples the device dropped (drains later than its buffer holds): a window
  // with an edge inside one carries the stretch's energy on its bar (sampling::SampleGap).
  std::uint64_t sample_gaps = 0;
  bool grid_learnt = true;            // the counter's postings were placed on a fitted grid
  bool had_time_to_learn = true;      // the job outlasted the time a grid takes to learn on an idle CPU
  std::optional<Nanos> grid_known_at;  // when the reads first knew it (on the job's time line)
  bool starved() const;
  bool complete() const { return !failure; }
};

// Whether the job's processes were seen on one GPU of the node (driver's compute-process list matched
// against the job's process tree, polled about every second and at the end).
struct GpuUsage {
  hw::GpuIdentity gpu;
  bool expected = false;  // one of the job's GPUs (--gpus, CUDA_VISIBLE_DEVICES or --job-gpus)
  bool measured = false;  // sampled: its energy is in Measurement::gpu_energy
  // nullopt: cannot tell (the driver cannot list this GPU's processes, or listed only pids of another pid
  // namespace, as a container may see); true: a process of the job held a compute context on it.
  std::optional<bool> job_seen;
  std::vector<int> pids;  // the job's pids seen on it, as the driver reported them
};

// One occurrence of a phase, with its energy summed over the GPUs it ran on.
struct PhaseInstance {
  workload::Phase phase;
  std::optional<double> energy_j;
  double uncertainty_j = 0;  // energy_j's error bar: the GPUs' bars added
  sampling::EnergyMethod method = sampling::EnergyMethod::kNone;
  std::vector<std::optional<double>>
      energy_per_gpu_j;  // in the order of Measurement::gpus; nullopt: not attributed
  // Per GPU as energy_per_gpu_j: its bar and the counter pieces its window touched (WindowEnergy::pieces),
  // which say whose bars a sum of occurrences adds linearly (SummedBar).
  std::vector<double> uncertainty_per_gpu_j;
  std::vector<std::optional<std::pair<Nanos, Nanos>>> pieces_per_gpu;
};

// The error bar of a sum of occurrences (a phase name's total). An occurrence's bar is mostly set by the
// counter pieces its edges fall in: how the fine trace split them (the piece's scale against the overall
// one, the misfit over whole pieces) and where their knots lie. Occurrences touching a common piece share
// those errors (a piece charged 9% low makes every occurrence in it low: issue 20's load test, repetition
// 47), so on each GPU the bars of a chain of occurrences whose pieces overlap add linearly; chains that
// share no piece have independent errors and add in quadrature; GPUs (their counters) add linearly, as a
// single occurrence's do. A plain linear sum would grow with the count (1000 iterations: 1000 edges'
// bars); the quadrature of every bar was overconfident for occurrences of one piece.
// Occurrences are added in time order per GPU (one out of order joins the open chain: wider, never
// narrower). Bounded memory: one open chain per GPU.
class SummedBar {
 public:
  void add(const PhaseInstance& instance);
  double joules() const;

 private:
  struct Chain {
    double closed_sq = 0;  // the closed chains' sums, squared and added
    double open_j = 0;     // the open chain's linear sum
    std::optional<Nanos> open_until;  // the last piece the open chain touched; absent: nothing shares it
  };
  std::vector<Chain> per_gpu_;
};

// All occurrences of one phase name, for the summary table.
struct PhaseSummary {
  std::string name;
  std::size_t count = 0;
  double time_s = 0;  // sum of the occurrences' durations; with ranks side by side, the longest rank's
  std::optional<double> energy_j;  // sum over occurrences (absent if any occurrence lacks energy)
  // energy_j's error bar: the occurrences' bars added as SummedBar adds them (linearly over occurrences
  // sharing a counter piece, in quadrature across those that share none).
  double uncertainty_j = 0;
  SummedBar bar;
  sampling::EnergyMethod method = sampling::EnergyMethod::kNone;
  std::optional<double> samples;  // sum of the `samples` counters
  std::optional<double> flops;    // sum of the `flops` counters
  // Over the counted occurrences: their energies (those with a figure) and their durations, one at a time,
  // so that means and CVs need no list of occurrences.
  RunningStats energy_per_occurrence;
  RunningStats time_per_occurrence;
  // The node over the phase's time (its outermost occurrences, overlapping ranks' spans counted once):
  // gpus_j from attribute_energy, the node sources from account_node.
  NodeParts node = {};
  std::optional<double> j_per_sample() const;
  std::optional<double> gflops_per_w() const;
};

// The phase summaries as occurrences are added one at a time (outermost occurrences only): per name in
// order of first appearance, and each (name, rank)'s time (a name's time is its longest rank's).
struct PhaseTotals {
  std::map<std::string, PhaseSummary> by_name;
  std::vector<std::string> order;
  struct RankTotals {
    std::size_t count = 0;
    double time_s = 0;
    std::optional<double> energy_j = 0.0;  // absent once an occurrence had no figure
    SummedBar bar;                         // energy_j's error bar (0 once an occurrence had no figure)
  };
  std::map<std::pair<std::string, int>, RankTotals> per_rank;  // (name, rank or -1)
  void add(const PhaseInstance& instance);
};

// What a long job's phase folding (measure/phase_folding.hpp) took out of `markers` and `phases` while it
// ran: the occurrences that ended then, accounted from the trace of their time and added to the totals,
// and a bounded sample of them.
struct FoldedPhases {
  std::size_t markers = 0;          // markers folded (no longer in Measurement::markers)
  std::size_t instances = 0;        // occurrences folded (nested ones included)
  std::size_t unmatched_ends = 0;   // ends without their begin among the folded markers
  PhaseTotals totals;               // the folded outermost occurrences
  std::vector<PhaseInstance> sample;  // a sample of the folded occurrences, per name, in time order
};

// Where wattwise's own CPU went during a real measurement (`sampler_cost` in docs/measure-json.md).
struct SamplerCostReport {
  double startup_cpu_s = 0;          // the process before the measurement began: NVML loaded, GPUs found
  double sampled_s = 0;              // from the sampler's start to its stop (the job and its tail)
  double sampling_thread_cpu_s = 0;  // the one sampling thread: every GPU's calls and the loop itself
  double accounting_cpu_s = 0;       // energy attributed to GPUs and phases after the job
  std::vector<sampling::GpuSamplerCost> gpus;  // same order as Measurement::gpus
};

// One invariant a GPU's figures broke (measure/energy_checks.hpp), and what was reported instead.
struct EnergyCheckFailure {
  std::size_t gpu = 0;  // position in Measurement::gpus
  std::string check;    // "alignment-scale", "counter-brackets", "power-limit", "peak-power", "phases-within-gpu"
  std::string detail;   // what was seen, one line
};

// The invariants every measurement is checked against; a GPU that breaks one falls back to the counter
// alone (GpuEnergy::counter_only), so no impossible figure is reported.
struct EnergyChecks {
  std::vector<std::string> checked;  // the checks that ran, by name
  std::vector<EnergyCheckFailure> failures;
  bool passed() const { return failures.empty(); }
};

// Everything one measured run produced: what ran, the raw traces, the markers and the energy attribution.
struct Measurement {
  std::string tool_version;
  std::string backend;  // "nvml" or "simulated"
  std::string driver_version;
  std::vector<std::string> command;
  Nanos job_start{0};
  Nanos job_end{0};
  JobOutcome outcome;
  // The end of what the job wrote on its stdout and stderr (MeasureOptions::keep_output_tail: a sweep's
  // runs); absent when not kept.
  std::optional<workload::StreamTail> job_stdout;
  std::optional<workload::StreamTail> job_stderr;
  double wattwise_cpu_s = 0;                      // CPU time wattwise itself used (all its threads)
  std::optional<SamplerCostReport> sampler_cost;  // real runs only

  // How the job's GPUs were chosen: "all", "--gpus", "CUDA_VISIBLE_DEVICES" or "--job-gpus".
  std::string job_gpu_source = "all";
  std::vector<hw::GpuIdentity> gpus;
  std::vector<sampling::GpuTrace> traces;  // same order as gpus
  std::vector<workload::Marker> markers;
  std::size_t malformed_markers = 0;
  std::size_t dropped_markers = 0;  // dropped by the job's clients (queue full), as they reported later
  std::size_t refused_markers = 0;  // from another user's process that the job did not start
  std::string refused_reason;       // why the first one was refused; empty when none was
  std::size_t unmatched_markers = 0;
  std::vector<workload::Phase> phases;
  // Set once a long job's phases were folded while it ran (memory bounded): `markers` and `phases` then
  // hold only what was not folded, and the summaries start from these totals.
  std::optional<FoldedPhases> folded;

  std::vector<GpuEnergy> gpu_energy;
  EnergyChecks checks;
  std::vector<GpuUsage> gpu_usage;  // every GPU of the node; empty when not detected (a simulated job)
  std::vector<PhaseInstance> phase_instances;
  std::vector<PhaseSummary> phase_summaries;
  // Per (name, rank or -1): the error bars of the outermost occurrences' energy (SummedBar), as phases_by_rank
  // lists them; absent for a (name, rank) one of whose occurrences had no figure.
  std::map<std::pair<std::string, int>, double> phase_rank_uncertainty_j;
  // Node power beside the GPUs (CPU package, DRAM, a meter): absent when no node source was read.
  std::optional<NodeEnergy> node;
  std::vector<sampling::NodeTrace> node_traces;

  std::optional<double> total_energy_j() const;  // over the GPUs the job used
  double total_energy_uncertainty_j() const;     // its error bar: the GPUs' bars added
  // False when some GPU failed during the run: its figures (and so the total) cover only part of it.
  bool complete() const;
  // UUIDs of the GPUs a driver call of which never returned (SourceFailure::hung): calling them again
  // would block the caller, so a sweep or `tune` stops and leaves them to the watchdog.
  std::set<std::string> unanswering_gpus() const;
  double wall_s() const { return to_seconds(job_end - job_start); }
  // Every marker heard: those kept and those folded while the job ran.
  std::size_t received_markers() const { return markers.size() + (folded ? folded->markers : 0); }
};

}  // namespace wattwise::measure
