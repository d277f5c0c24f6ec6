#include "experiment/multi_node_run.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <chrono>
#include <map>
#include <thread>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "experiment/runner.hpp"
#include "store/measured_run.hpp"
#include "slurm/merge_files.hpp"
#include "workload/process.hpp"
#include "workload/stop_signals.hpp"

namespace wattwise::experiment {

namespace {

using nlohmann::json;

std::optional<double> optional_number(const json& value) {
  return value.is_number() ? std::optional<double>(value.get<double>()) : std::nullopt;
}

// Each GPU's enforced power limit as its node's agent read it back, by UUID.
std::map<std::string, json> enforced_limits(const std::vector<slurm::TaskResult>& results) {
  std::map<std::string, json> limits;
  for (const auto& r : results) {
    const json settings = r.measurement.value("settings", json());
    if (!settings.is_object()) continue;
    for (const auto& gpu : settings.value("gpus", json::array()))
      limits[gpu.value("uuid", "")] = gpu.value("enforced_power_limit_w", json());
  }
  return limits;
}

std::vector<store::ClusterNodeEnergy> cluster_nodes(const json& merged,
                                                    const std::vector<slurm::TaskResult>& results) {
  const auto limits = enforced_limits(results);
  std::vector<store::ClusterNodeEnergy> nodes;
  for (const auto& n : merged.at("nodes")) {
    json gpus = json::array();
    for (const auto& g : n.at("gpus")) {
      const std::string uuid = g.at("uuid");
      gpus.push_back({{"uuid", uuid},
                      {"index", g.value("index", json())},
                      {"name", g.value("name", json())},
                      {"energy_j", g.value("energy_j", json())},
                      {"enforced_power_limit_w", limits.contains(uuid) ? limits.at(uuid) : json()}});
    }
    nodes.push_back({n.at("node").get<std::string>(), n.value("wall_s", 0.0),
                     optional_number(n.value("energy_j", json())), n.value("complete", false), gpus.dump()});
  }
  return nodes;
}

// Why the run failed, for the database's `error` column; empty when it did not.
std::string failure_of(const json& merged, const std::vector<slurm::TaskResult>& results,
                       int srun_exit_code) {
  std::vector<std::string> reasons;
  if (srun_exit_code > 128)
    reasons.push_back(fmt::format("srun killed by signal {}", srun_exit_code - 128));
  else if (srun_exit_code != 0)
    reasons.push_back(fmt::format("exit status {}", srun_exit_code));
  if (!merged.at("missing_tasks").empty())
    reasons.push_back(fmt::format("no result from node task(s) {} (the agent died or its node was lost)",
                                  fmt::join(merged.at("missing_tasks").get<std::vector<int>>(), ", ")));
  for (const auto& n : merged.at("nodes"))
    if (!n.value("complete", false))
      reasons.push_back(fmt::format("node {}: measurement incomplete", n.at("node").get<std::string>()));
  for (const auto& r : results) {
    const json settings = r.measurement.value("settings", json());
    if (settings.is_object() && !settings.value("restored", true))
      reasons.push_back(
          fmt::format("node {}: GPU settings not restored: run `wattwise restore` there", r.task.node));
  }
  return fmt::format("{}", fmt::join(reasons, "; "));
}

std::string method_of(const std::vector<slurm::TaskResult>& results) {
  for (const auto& r : results)
    for (const auto& gpu : r.measurement.at("gpus"))
      if (gpu.value("used_by_job", false) && gpu.contains("method")) return gpu.at("method");
  return "";
}

// A fresh directory for this attempt of the run: a run that failed and runs again (--resume) keeps the
// files of the earlier attempt.
std::filesystem::path run_directory(const std::filesystem::path& runs_dir, std::size_t index) {
  const std::string base = fmt::format("run-{:04}", index);
  std::filesystem::path dir = runs_dir / base;
  for (int attempt = 2; std::filesystem::exists(dir); ++attempt)
    dir = runs_dir / fmt::format("{}.attempt-{}", base, attempt);
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error)
    throw environment_error(
        fmt::format("cannot create {} for the nodes' results ({}): the directory of "
                    "--db must be writable (and shared by the nodes)",
                    dir.string(), error.message()));
  return dir;
}

// `scancel --signal=TERM JOB`: SIGTERM to every process of the allocation's steps (not to the batch script
// or salloc's command, where the sweep runs). A failure is said on stderr; the agents' watchdogs and
// `wattwise restore` remain.
void signal_steps(const std::string& job_id) {
  std::vector<std::string> args = {"scancel", "--signal=TERM", job_id};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  int status = 0;
  if (::posix_spawnp(&pid, "scancel", nullptr, nullptr, argv.data(), environ) != 0 ||
      ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    std::fprintf(stderr,
                 "wattwise: `scancel --signal=TERM %s` failed: the nodes' agents may not restore until "
                 "their step ends; check with `wattwise restore` on each node\n",
                 job_id.c_str());
}

// Waits for srun. A stop signal to the sweep reaches every node's agent as SIGTERM (scancel --signal): the
// agent stops its job and restores its GPUs, and srun returns once every agent is done. Not through srun
// itself: srun answers SIGINT with a status line and SIGTERM (or two SIGINTs, or --quit-on-interrupt, or
// its own death) by having SLURM SIGKILL every process of the step, the agents' watchdogs with them.
int wait_passing_stops_to_agents(workload::Process& srun) {
  workload::StopSignals::set_job_group(0);  // the stop signals are ours to pass on
  const char* job_id = std::getenv("SLURM_JOB_ID");
  int passed = 0;
  while (!srun.poll()) {
    if (workload::StopSignals::count() > passed && job_id != nullptr) {
      passed = workload::StopSignals::count();
      signal_steps(job_id);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return srun.exit_code();
}

}  // namespace

hw::GpuReadings& NoLocalGpus::gpu(std::size_t index) {
  throw usage_error(
      fmt::format("no GPU at position {}: a multi-node sweep uses none on its own host", index));
}

std::vector<std::string> srun_argv(const MultiNodeOptions& options, const plan::PlannedRun& run,
                                   const std::filesystem::path& out_dir) {
  std::vector<std::string> argv = {options.srun};
  if (const auto nodes = run.params.find(kNodesKnob); nodes != run.params.end())
    argv.push_back("--nodes=" + nodes->second);
  for (const char* flag : {"--ntasks-per-node=1", "--kill-on-bad-exit=1"}) argv.push_back(flag);
  argv.insert(argv.end(), options.srun_args.begin(), options.srun_args.end());
  for (const auto& a : {options.wattwise.string(), std::string("measure"), std::string("--no-status"),
                        std::string("--out-dir"), out_dir.string()})
    argv.push_back(a);
  const auto& hw = run.hardware;
  if (hw.power_limit_w) argv.insert(argv.end(), {"--power-limit", fmt::format("{}", *hw.power_limit_w)});
  if (hw.sm_clock_mhz) argv.insert(argv.end(), {"--sm-clock", std::to_string(*hw.sm_clock_mhz)});
  if (hw.mem_clock_mhz) argv.insert(argv.end(), {"--mem-clock", std::to_string(*hw.mem_clock_mhz)});
  argv.insert(argv.end(), options.agent_args.begin(), options.agent_args.end());
  argv.push_back("--");
  const auto command = plan::substitute_params(options.command, run.params);
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

store::RunRecord multi_node_record(const plan::PlannedRun& run, const std::vector<slurm::TaskResult>& results,
                                   int srun_exit_code, const std::string& started_at,
                                   const std::string& ended_at) {
  store::RunRecord r = store::planned_run_record(run, started_at, ended_at, srun_exit_code);
  if (results.empty()) {
    r.error = fmt::format("no node wrote a result (srun exit status {}): see srun's messages above",
                          srun_exit_code);
    return r;
  }
  const json merged = slurm::merge_step(results);
  r.time_s = merged.at("wall_s").get<double>();
  r.energy_j = optional_number(merged.at("energy_j"));
  r.method = method_of(results);
  r.error = failure_of(merged, results, srun_exit_code);
  for (const auto& p : merged.at("phases")) {
    store::PhaseResult phase;
    phase.name = p.at("name");
    phase.count = p.at("count").get<unsigned>();
    phase.time_s = p.at("time_s").get<double>();
    phase.energy_j = optional_number(p.at("energy_j"));
    phase.method = r.method;
    r.phases.push_back(phase);
  }
  r.cluster_nodes = cluster_nodes(merged, results);
  return r;
}

std::function<store::RunRecord(const plan::PlannedRun&)> multi_node_runs(MultiNodeOptions options) {
  return [options](const plan::PlannedRun& run) {
    const std::filesystem::path dir = run_directory(options.runs_dir, run.index);
    workload::LaunchSpec spec;
    spec.argv = srun_argv(options, run, dir);
    // srun passes its environment on to the agents (--export=ALL), and they to the job.
    for (const auto& [name, value] : plan::param_environment(run.params))
      spec.extra_environment[name] = value;
    const std::string started_at = utc_now_iso8601();
    workload::Process srun = workload::Process::start(spec);
    const int exit_code = wait_passing_stops_to_agents(srun);
    const std::string ended_at = utc_now_iso8601();
    std::vector<slurm::TaskResult> results;
    std::string unreadable;
    try {
      results = slurm::select_step(slurm::read_task_results({dir.string()}).results, std::nullopt);
    } catch (const Error& e) {
      unreadable = e.what();  // a node's file half-written when its agent was killed: the run failed
    }
    store::RunRecord record = multi_node_record(run, results, exit_code, started_at, ended_at);
    if (!unreadable.empty()) record.error += (record.error.empty() ? "" : "; ") + unreadable;
    return record;
  };
}

}  // namespace wattwise::experiment
