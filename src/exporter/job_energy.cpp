#include "exporter/job_energy.hpp"

#include <algorithm>
#include <fstream>
#include <iterator>

#include "core/error.hpp"

namespace wattwise::exporter {
namespace {

// Checked in this order: the first set (and non-empty) one names the job.
constexpr std::string_view kJobVariables[] = {"WATTWISE_JOB_ID", "SLURM_JOB_ID"};

}  // namespace

std::optional<std::string> job_id_from_environ(std::string_view environ) {
  for (const std::string_view variable : kJobVariables) {
    std::size_t begin = 0;
    while (begin < environ.size()) {
      std::size_t end = environ.find('\0', begin);
      if (end == std::string_view::npos) end = environ.size();
      const std::string_view entry = environ.substr(begin, end - begin);
      if (entry.size() > variable.size() && entry.starts_with(variable) && entry[variable.size()] == '=') {
        const std::string_view value = entry.substr(variable.size() + 1).substr(0, kMaxJobIdBytes);
        if (!value.empty()) return std::string(value);
      }
      begin = end + 1;
    }
  }
  return std::nullopt;
}

std::optional<std::string> job_id_of_process(int pid, const std::filesystem::path& proc) {
  if (pid <= 0) return std::nullopt;
  std::ifstream in(proc / std::to_string(pid) / "environ", std::ios::binary);
  if (!in) return std::nullopt;
  const std::string environ{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return job_id_from_environ(environ);
}

JobEnergy::JobEnergy(std::size_t max_jobs) : max_jobs_(max_jobs) {
  if (max_jobs_ == 0) throw Error(ErrorKind::kInternal, "JobEnergy needs room for one job");
}

JobEnergy::Job& JobEnergy::find_or_insert(const std::string& id, Nanos now) {
  auto it = std::find_if(jobs_.begin(), jobs_.end(), [&](const Job& job) { return job.id == id; });
  if (it != jobs_.end()) return *it;
  if (jobs_.size() >= max_jobs_) {
    auto oldest = std::min_element(jobs_.begin(), jobs_.end(),
                                   [](const Job& a, const Job& b) { return a.last_seen < b.last_seen; });
    jobs_.erase(oldest);
    ++evicted_;
  }
  jobs_.push_back(Job{id, 0, now, now});
  return jobs_.back();
}

void JobEnergy::add(std::vector<std::string> job_ids, double joules, Nanos now) {
  std::sort(job_ids.begin(), job_ids.end());
  job_ids.erase(std::unique(job_ids.begin(), job_ids.end()), job_ids.end());
  if (job_ids.empty()) return;
  const double share_j = std::max(joules, 0.0) / static_cast<double>(job_ids.size());
  for (const std::string& id : job_ids) {
    Job& job = find_or_insert(id, now);
    job.energy_j += share_j;
    job.last_seen = now;
  }
}

std::vector<JobEnergy::Job> JobEnergy::jobs() const {
  std::vector<Job> sorted = jobs_;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Job& a, const Job& b) { return a.last_seen > b.last_seen; });
  return sorted;
}

}  // namespace wattwise::exporter
