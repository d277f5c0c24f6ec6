#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.hpp"

namespace wattwise::exporter {

// How many jobs the exporter keeps a series for (running and finished together): the bound on the job
// label's cardinality. A new job pushes out the one seen least recently.
inline constexpr std::size_t kMaxJobs = 16;
// A job id longer than this is cut: a label is an index key, not a place for a novel.
inline constexpr std::size_t kMaxJobIdBytes = 64;

// The job a process belongs to, from the environment it was started with (/proc/PID/environ):
// WATTWISE_JOB_ID if set (any job can name itself), else SLURM_JOB_ID. Absent when the process is gone,
// its environment is not readable (another user's process, unless the exporter runs as root), or it
// names no job. `proc` is the procfs root (tests pass a directory of their own).
std::optional<std::string> job_id_of_process(int pid, const std::filesystem::path& proc = "/proc");

// The job id from an environ block (NUL-separated NAME=value entries); exposed for tests.
std::optional<std::string> job_id_from_environ(std::string_view environ);

// Energy per job, for at most `max_jobs` jobs. The exporter polls each GPU's compute processes every
// second and gives the GPU's energy since the previous poll to the jobs found on it, in equal shares: a
// job's energy is thus resolved to that second, and a GPU shared by two jobs is split evenly between them
// (NVML does not say who used how much of a shared GPU).
class JobEnergy {
 public:
  explicit JobEnergy(std::size_t max_jobs = kMaxJobs);

  struct Job {
    std::string id;
    double energy_j = 0;
    Nanos first_seen{0};
    Nanos last_seen{0};
  };

  // `joules` that one GPU used since the previous poll, shared by `job_ids` (duplicates count once).
  void add(std::vector<std::string> job_ids, double joules, Nanos now);
  // Most recently seen first.
  std::vector<Job> jobs() const;
  // Jobs pushed out by newer ones since the start.
  std::size_t evicted() const { return evicted_; }

 private:
  Job& find_or_insert(const std::string& id, Nanos now);

  std::size_t max_jobs_;
  std::vector<Job> jobs_;
  std::size_t evicted_ = 0;
};

}  // namespace wattwise::exporter
