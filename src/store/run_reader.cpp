// ResultsStore's reading side: every query reads a table once, whatever the number of runs.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/error.hpp"
#include "store/database.hpp"
#include "store/energy_uncertainty_columns.hpp"
#include "store/phase_rows.hpp"
#include "store/results_store.hpp"
#include "store/sqlite_statement.hpp"

namespace wattwise::store {
namespace {

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string optional_number(const std::optional<double>& value) {
  return value ? fmt::format("{}", *value) : std::string();
}

}  // namespace

std::optional<TuneTrace> ResultsStore::tune_trace() const {
  return read_tune_trace(db_, path_.string());
}

std::set<std::size_t> ResultsStore::completed_plan_indices() const {
  std::set<std::size_t> done;
  Statement query(db_, path_.string(), "SELECT plan_index FROM runs");
  while (query.step()) done.insert(static_cast<std::size_t>(query.integer(0)));
  return done;
}

std::set<std::size_t> ResultsStore::succeeded_plan_indices() const {
  std::set<std::size_t> done;
  Statement query(db_, path_.string(), "SELECT plan_index FROM runs WHERE error = ''");
  while (query.step()) done.insert(static_cast<std::size_t>(query.integer(0)));
  return done;
}

std::vector<EarlierAttempt> ResultsStore::earlier_attempts() const {
  std::vector<EarlierAttempt> attempts;
  if (schema_version() < 2) return attempts;
  Statement query(db_, path_.string(),
                  "SELECT plan_index, started_at, ended_at, exit_status, error, replaced_at FROM "
                  "earlier_attempts ORDER BY rowid");
  while (query.step()) {
    EarlierAttempt a;
    a.plan_index = static_cast<std::size_t>(query.integer(0));
    a.started_at = query.text(1);
    a.ended_at = query.text(2);
    if (auto status = query.optional_integer(3)) a.exit_status = static_cast<int>(*status);
    a.error = query.text(4);
    a.replaced_at = query.text(5);
    attempts.push_back(std::move(a));
  }
  return attempts;
}

std::vector<GpuRunUsage> ResultsStore::gpu_usage(std::size_t plan_index) const {
  std::vector<GpuRunUsage> usage;
  if (schema_version() < 3) return usage;
  Statement query(
      db_, path_.string(),
      "SELECT u.gpu_index, u.uuid, u.expected, u.measured, u.job_seen, u.pids_json FROM "
      "run_gpu_usage u JOIN runs r ON r.id = u.run_id WHERE r.plan_index = ? ORDER BY u.gpu_index");
  query.bind(1, static_cast<std::int64_t>(plan_index));
  while (query.step()) {
    GpuRunUsage u;
    u.gpu_index = static_cast<unsigned>(query.integer(0));
    u.uuid = query.text(1);
    u.expected = query.integer(2) != 0;
    u.measured = query.integer(3) != 0;
    if (auto seen = query.optional_integer(4)) u.job_seen = *seen != 0;
    u.pids = nlohmann::json::parse(query.text(5)).get<std::vector<int>>();
    usage.push_back(std::move(u));
  }
  return usage;
}

std::vector<RunRecord> ResultsStore::runs() const {
  const std::string p = path_.string();
  std::vector<RunRecord> runs;
  std::map<std::int64_t, std::size_t> position;  // runs.id -> index into runs
  Statement query(
      db_, p,
      "SELECT id, plan_index, repeat, warmup, started_at, ended_at, exit_status, time_s, energy_j, "
      "method, error, work, label FROM runs ORDER BY plan_index");
  while (query.step()) {
    RunRecord run;
    position[query.integer(0)] = runs.size();
    run.plan_index = static_cast<std::size_t>(query.integer(1));
    run.repeat = static_cast<unsigned>(query.integer(2));
    run.warmup = query.integer(3) != 0;
    run.started_at = query.text(4);
    run.ended_at = query.text(5);
    if (auto status = query.optional_integer(6)) run.exit_status = static_cast<int>(*status);
    run.time_s = query.optional_real(7);
    run.energy_j = query.optional_real(8);
    run.method = query.text(9);
    run.error = query.text(10);
    run.work = query.optional_real(11);
    run.label = query.text(12);
    runs.push_back(std::move(run));
  }
  // Each table once, its rows handed to their runs (a row of no stored run is none of ours: skipped).
  const auto run_of = [&](const Statement& row) -> RunRecord* {
    const auto it = position.find(row.integer(0));
    return it == position.end() ? nullptr : &runs[it->second];
  };
  Statement settings(db_, p, "SELECT run_id, knob, value FROM run_settings ORDER BY run_id, position");
  while (settings.step())
    if (RunRecord* run = run_of(settings)) run->settings.push_back({settings.text(1), settings.text(2)});
  Statement gpus(
      db_, p,
      "SELECT run_id, gpu_index, energy_j, avg_power_w, peak_power_w, method, enforced_power_limit_w, "
      "sm_clock_mhz, mem_clock_mhz FROM run_gpu_energy ORDER BY run_id, gpu_index");
  while (gpus.step()) {
    RunRecord* run = run_of(gpus);
    if (run == nullptr) continue;
    GpuRunEnergy gpu;
    gpu.gpu_index = static_cast<unsigned>(gpus.integer(1));
    gpu.energy_j = gpus.optional_real(2);
    gpu.avg_power_w = gpus.optional_real(3);
    gpu.peak_power_w = gpus.optional_real(4);
    gpu.method = gpus.text(5);
    gpu.enforced_power_limit_w = gpus.optional_real(6);
    if (auto mhz = gpus.optional_integer(7)) gpu.sm_clock_mhz = static_cast<unsigned>(*mhz);
    if (auto mhz = gpus.optional_integer(8)) gpu.mem_clock_mhz = static_cast<unsigned>(*mhz);
    run->gpus.push_back(gpu);
  }
  read_phase_rows(db_, p, [&](std::int64_t run_id, PhaseResult&& phase) {
    if (const auto it = position.find(run_id); it != position.end())
      runs[it->second].phases.push_back(std::move(phase));
  });
  for (const auto& [run_id, bar] : read_run_energy_uncertainty(db_, p))
    if (const auto it = position.find(run_id); it != position.end())
      runs[it->second].energy_uncertainty_j = bar;
  for (auto& [run_id, node] : read_node_energy(db_, p))
    if (const auto it = position.find(run_id); it != position.end()) runs[it->second].node = std::move(node);
  for (auto& [run_id, nodes] : read_cluster_nodes(db_, p))
    if (const auto it = position.find(run_id); it != position.end())
      runs[it->second].cluster_nodes = std::move(nodes);
  return runs;
}

std::vector<RunOutput> ResultsStore::run_output(std::size_t plan_index) const {
  return read_run_output(db_, path_.string(), static_cast<std::int64_t>(plan_index));
}

nlohmann::json ResultsStore::plan() const {
  Statement query(db_, path_.string(), "SELECT spec_json FROM plan WHERE id = 1");
  if (!query.step())
    throw data_error(fmt::format("results database {} has no plan: it is damaged", path_.string()));
  try {
    return nlohmann::json::parse(query.text(0));
  } catch (const std::exception& e) {
    throw data_error(fmt::format("results database {} has an unreadable plan ({}): it is damaged",
                                 path_.string(), e.what()));
  }
}

std::vector<StoredGpu> ResultsStore::gpus() const {
  std::vector<StoredGpu> gpus;
  Statement query(
      db_, path_.string(),
      "SELECT gpu_index, uuid, name, min_limit_w, max_limit_w, default_limit_w FROM gpus ORDER BY "
      "gpu_index");
  while (query.step()) {
    gpus.push_back({static_cast<unsigned>(query.integer(0)), query.text(1), query.text(2),
                    query.optional_real(3), query.optional_real(4), query.optional_real(5)});
  }
  return gpus;
}

std::string ResultsStore::meta(const std::string& key) const {
  return read_meta(db_, path_.string(), key);
}

void ResultsStore::export_runs_csv(std::ostream& out) const {
  std::vector<std::string> knobs;
  for (const auto& knob : plan().value("knobs", nlohmann::json::array())) knobs.push_back(knob.at("name"));
  for (const auto& knob : knobs) out << csv_field(knob) << ',';
  out << "time_s,energy_j,repeat,work,label,energy_uncertainty_j\n";
  for (const auto& run : runs()) {
    // Warm-ups are not analysed, and a failed run has no trustworthy time or energy.
    if (run.warmup || !run.error.empty() || !run.time_s || !run.energy_j) continue;
    for (const auto& knob : knobs) {
      auto it =
          std::find_if(run.settings.begin(), run.settings.end(), [&](auto& s) { return s.knob == knob; });
      out << (it == run.settings.end() ? std::string() : csv_field(it->value)) << ',';
    }
    out << fmt::format("{},{},{},{},{},{}\n", *run.time_s, *run.energy_j, run.repeat, optional_number(run.work),
                       csv_field(run.label), optional_number(run.energy_uncertainty_j));
  }
}

}  // namespace wattwise::store
