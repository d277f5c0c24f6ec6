#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.hpp"

namespace wattwise::exporter {

// How many jobs the exporter keeps a series for, per source (running and finished together): the bound on
// the job label's cardinality. A new job pushes out the one of its source seen least recently, so ids a
// user sets can never push out the scheduler's jobs.
inline constexpr std::size_t kMaxJobs = 16;
// A job id longer than this is cut (at a character boundary): a label is an index key, not a place for a
// novel.
inline constexpr std::size_t kMaxJobIdBytes = 64;

// Who named a job: the scheduler (SLURM: the job's cgroup, else SLURM_JOB_ID, which slurmd sets for every
// process of a job), or the process itself (WATTWISE_JOB_ID, which any user can set to anything).
enum class JobSource { kScheduler, kUser };
// The label value: "slurm" or "user".
std::string_view job_source_label(JobSource source);

struct JobId {
  std::string id;  // valid UTF-8, at most kMaxJobIdBytes
  JobSource source = JobSource::kScheduler;
  bool operator==(const JobId&) const = default;
  auto operator<=>(const JobId&) const = default;
};

// The job a process belongs to: the SLURM job of its cgroup (/proc/PID/cgroup, ".../job_<N>/..."; a
// process cannot leave it), else SLURM_JOB_ID from the environment it was started with
// (/proc/PID/environ), else WATTWISE_JOB_ID there, marked as user-set. Absent when the process is gone,
// neither file is readable (another user's process, unless the exporter runs as root), or it names no
// job. `proc` is the procfs root (tests pass a directory of their own).
std::optional<JobId> job_id_of_process(int pid, const std::filesystem::path& proc = "/proc");

// The job from a cgroup file's text and an environ block (NUL-separated NAME=value entries); exposed for
// tests. Ids are made valid UTF-8 (U+FFFD for bad bytes) and cut to kMaxJobIdBytes.
std::optional<JobId> job_id_from(std::string_view cgroup, std::string_view environ);

// Energy per job, for at most `max_jobs` jobs of each source. The exporter polls each GPU's compute
// processes every second and gives the GPU's energy since the previous poll to the jobs found on it, in
// equal shares: a job's energy is thus resolved to that second, and a GPU shared by two jobs is split
// evenly between them (NVML does not say who used how much of a shared GPU).
class JobEnergy {
 public:
  explicit JobEnergy(std::size_t max_jobs = kMaxJobs);

  struct Job {
    JobId job;
    double energy_j = 0;
    // energy_j's error bar (+-): the shares of the GPUs' bars that grew while the job was on them (energy
    // integrated from power), plus its first and its latest poll's shares whole (a job is resolved to the
    // poll: it may have started or ended anywhere inside them).
    double uncertainty_j = 0;
    Nanos first_seen{0};
    Nanos last_seen{0};
    // The parts of uncertainty_j: the grown bars' shares, the first poll's shares, the latest poll's.
    double grown_bar_j = 0;
    double first_poll_j = 0;
    double last_poll_j = 0;
  };

  // `joules` that one GPU used since the previous poll, shared by `jobs` (duplicates count once);
  // `bar_growth_j`: how much the GPU total's committed error bar grew meanwhile
  // (EnergyTotal::committed_uncertainty_j).
  void add(std::vector<JobId> jobs, double joules, Nanos now, double bar_growth_j = 0);
  // Most recently seen first.
  std::vector<Job> jobs() const;
  // Jobs of `source` pushed out by newer ones since the start.
  std::size_t evicted(JobSource source) const;

 private:
  Job& find_or_insert(const JobId& id, Nanos now);

  std::size_t max_jobs_;
  std::vector<Job> jobs_;
  std::size_t evicted_[2] = {0, 0};
};

}  // namespace wattwise::exporter
