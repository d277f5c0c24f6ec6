#include "exporter/job_energy.hpp"

#include <algorithm>
#include <fstream>
#include <iterator>

#include "core/error.hpp"
#include "core/text.hpp"

namespace wattwise::exporter {
namespace {

constexpr std::size_t kMaxProcFileBytes = 1 << 20;  // an environ or cgroup file larger than this is cut

std::string label_safe(std::string_view id) {
  return cut_utf8(valid_utf8(id), kMaxJobIdBytes);
}

// The value of `variable` in an environ block; empty when unset or empty.
std::string_view environ_value(std::string_view environ, std::string_view variable) {
  std::size_t begin = 0;
  while (begin < environ.size()) {
    std::size_t end = environ.find('\0', begin);
    if (end == std::string_view::npos) end = environ.size();
    const std::string_view entry = environ.substr(begin, end - begin);
    if (entry.size() > variable.size() && entry.starts_with(variable) && entry[variable.size()] == '=')
      return entry.substr(variable.size() + 1);
    begin = end + 1;
  }
  return {};
}

// N of a path component "job_N" in a cgroup file (SLURM's cgroup v1 and v2 layouts both have one:
// /slurm/uid_1000/job_42/step_0, /system.slice/slurmstepd.scope/job_42/step_0/user/task_0).
std::string_view cgroup_job(std::string_view cgroup) {
  for (std::size_t at = cgroup.find("/job_"); at != std::string_view::npos; at = cgroup.find("/job_", at + 1)) {
    const std::size_t begin = at + 5;
    std::size_t end = begin;
    while (end < cgroup.size() && cgroup[end] >= '0' && cgroup[end] <= '9') ++end;
    if (end > begin && (end == cgroup.size() || cgroup[end] == '/' || cgroup[end] == '\n'))
      return cgroup.substr(begin, end - begin);
  }
  return {};
}

std::string read_proc_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::string text;
  char chunk[16384];
  while (text.size() < kMaxProcFileBytes && in.read(chunk, sizeof chunk).gcount() > 0)
    text.append(chunk, static_cast<std::size_t>(in.gcount()));
  return text;
}

}  // namespace

std::string_view job_source_label(JobSource source) {
  return source == JobSource::kScheduler ? "slurm" : "user";
}

std::optional<JobId> job_id_from(std::string_view cgroup, std::string_view environ) {
  if (const auto job = cgroup_job(cgroup); !job.empty()) return JobId{std::string(job), JobSource::kScheduler};
  if (const auto slurm = environ_value(environ, "SLURM_JOB_ID"); !slurm.empty())
    return JobId{label_safe(slurm), JobSource::kScheduler};
  if (const auto user = environ_value(environ, "WATTWISE_JOB_ID"); !user.empty())
    return JobId{label_safe(user), JobSource::kUser};
  return std::nullopt;
}

std::optional<JobId> job_id_of_process(int pid, const std::filesystem::path& proc) {
  if (pid <= 0) return std::nullopt;
  const auto dir = proc / std::to_string(pid);
  return job_id_from(read_proc_file(dir / "cgroup"), read_proc_file(dir / "environ"));
}

JobEnergy::JobEnergy(std::size_t max_jobs) : max_jobs_(max_jobs) {
  if (max_jobs_ == 0) throw Error(ErrorKind::kInternal, "JobEnergy needs room for one job");
}

JobEnergy::Job& JobEnergy::find_or_insert(const JobId& id, Nanos now) {
  auto it = std::find_if(jobs_.begin(), jobs_.end(), [&](const Job& job) { return job.job == id; });
  if (it != jobs_.end()) return *it;
  const auto same_source = [&](const Job& job) { return job.job.source == id.source; };
  if (static_cast<std::size_t>(std::count_if(jobs_.begin(), jobs_.end(), same_source)) >= max_jobs_) {
    auto oldest = jobs_.end();
    for (auto j = jobs_.begin(); j != jobs_.end(); ++j) {
      if (same_source(*j) && (oldest == jobs_.end() || j->last_seen < oldest->last_seen)) oldest = j;
    }
    jobs_.erase(oldest);
    ++evicted_[static_cast<int>(id.source)];
  }
  jobs_.push_back(Job{.job = id, .first_seen = now, .last_seen = now});
  return jobs_.back();
}

void JobEnergy::add(std::vector<JobId> jobs, double joules, Nanos now, double bar_growth_j) {
  std::sort(jobs.begin(), jobs.end());
  jobs.erase(std::unique(jobs.begin(), jobs.end()), jobs.end());
  if (jobs.empty()) return;
  const double share_j = std::max(joules, 0.0) / static_cast<double>(jobs.size());
  const double bar_share_j = std::max(bar_growth_j, 0.0) / static_cast<double>(jobs.size());
  for (const JobId& id : jobs) {
    Job& job = find_or_insert(id, now);
    job.energy_j += share_j;
    job.grown_bar_j += bar_share_j;
    // Every GPU is polled at the same instant: the shares of one instant make up one poll.
    if (now == job.first_seen) {
      job.first_poll_j += share_j;
    } else {
      if (now != job.last_seen) job.last_poll_j = 0;
      job.last_poll_j += share_j;
    }
    job.last_seen = now;
    job.uncertainty_j = job.grown_bar_j + job.first_poll_j + job.last_poll_j;
  }
}

std::vector<JobEnergy::Job> JobEnergy::jobs() const {
  std::vector<Job> sorted = jobs_;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Job& a, const Job& b) { return a.last_seen > b.last_seen; });
  return sorted;
}

std::size_t JobEnergy::evicted(JobSource source) const {
  return evicted_[static_cast<int>(source)];
}

}  // namespace wattwise::exporter
