// ResultsStore's writing side: a run with everything measured of it, in one transaction.
#include <fmt/format.h>
#include <sqlite3.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "store/energy_uncertainty_columns.hpp"
#include "store/results_store.hpp"
#include "store/sqlite_statement.hpp"

namespace wattwise::store {

void ResultsStore::add_run(const RunRecord& run) {
  // The run was measured at some cost: a lock held by another program past the busy timeout is waited out
  // again before the sweep gives up.
  for (int attempt = 1;; ++attempt) {
    try {
      add_run_once(run);
      return;
    } catch (const SqliteError& e) {
      if (!e.busy() || attempt >= kCommitAttempts) throw;
    }
  }
}

void ResultsStore::add_run_once(const RunRecord& run) {
  const std::string p = path_.string();
  Transaction transaction(db_, p);
  {
    Statement stored(db_, p, "SELECT error FROM runs WHERE plan_index = ?");
    stored.bind(1, static_cast<std::int64_t>(run.plan_index));
    if (stored.step() && stored.text(0).empty()) {
      throw Error(ErrorKind::kInternal,
                  fmt::format("run {} of the plan is already stored in {} and succeeded: it is not run "
                              "again",
                              run.plan_index, p));
    }
  }
  // A failed attempt of this run stored before: kept for the record in earlier_attempts, and out of
  // `runs`, so that each plan index is analysed once.
  {
    Statement keep(db_, p,
                   "INSERT INTO earlier_attempts (plan_index, settings_json, started_at, ended_at, "
                   "exit_status, time_s, energy_j, error, replaced_at) SELECT plan_index, settings_json, "
                   "started_at, ended_at, exit_status, time_s, energy_j, error, ? FROM runs WHERE "
                   "plan_index = ?");
    keep.bind(1, utc_now_iso8601()).bind(2, static_cast<std::int64_t>(run.plan_index)).run();
    for (const char* table : {"run_settings", "run_gpu_energy", "run_phases", "run_node_energy",
                              "run_phase_node_energy", "run_gpu_usage", "traces", "run_cluster_nodes",
                              "run_output"}) {
      const std::string sql =
          fmt::format("DELETE FROM {} WHERE run_id IN (SELECT id FROM runs WHERE plan_index = ?)", table);
      Statement remove(db_, p, sql.c_str());
      remove.bind(1, static_cast<std::int64_t>(run.plan_index)).run();
    }
    Statement remove(db_, p, "DELETE FROM runs WHERE plan_index = ?");
    remove.bind(1, static_cast<std::int64_t>(run.plan_index)).run();
  }
  nlohmann::json settings = nlohmann::json::object();
  for (const auto& s : run.settings) settings[s.knob] = s.value;
  Statement insert(
      db_, p,
      "INSERT INTO runs (plan_index, settings_json, repeat, warmup, started_at, ended_at, exit_status, "
      "time_s, energy_j, method, error, work, label) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  insert.bind(1, static_cast<std::int64_t>(run.plan_index))
      .bind(2, json_text(settings))
      .bind(3, static_cast<std::int64_t>(run.repeat))
      .bind(4, static_cast<std::int64_t>(run.warmup))
      .bind(5, run.started_at)
      .bind(6, run.ended_at)
      .bind(7, run.exit_status)
      .bind(8, run.time_s)
      .bind(9, run.energy_j)
      .bind(10, run.method)
      .bind(11, run.error)
      .bind(12, run.work)
      .bind(13, run.label)
      .run();
  const std::int64_t run_id = sqlite3_last_insert_rowid(db_);
  for (std::size_t i = 0; i < run.settings.size(); ++i) {
    Statement s(db_, p, "INSERT INTO run_settings (run_id, position, knob, value) VALUES (?, ?, ?, ?)");
    s.bind(1, run_id).bind(2, static_cast<std::int64_t>(i)).bind(3, run.settings[i].knob);
    s.bind(4, run.settings[i].value).run();
  }
  for (const auto& gpu : run.gpus) {
    Statement s(db_, p,
                "INSERT INTO run_gpu_energy (run_id, gpu_index, energy_j, avg_power_w, peak_power_w, method, "
                "enforced_power_limit_w, sm_clock_mhz, mem_clock_mhz) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
    s.bind(1, run_id).bind(2, static_cast<std::int64_t>(gpu.gpu_index)).bind(3, gpu.energy_j);
    s.bind(4, gpu.avg_power_w).bind(5, gpu.peak_power_w).bind(6, gpu.method);
    s.bind(7, gpu.enforced_power_limit_w).bind(8, gpu.sm_clock_mhz).bind(9, gpu.mem_clock_mhz).run();
  }
  for (const auto& phase : run.phases) {
    Statement s(db_, p,
                "INSERT INTO run_phases (run_id, gpu_index, name, count, time_s, energy_j, samples, method) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    s.bind(1, run_id)
        .bind(2, phase.gpu_index)
        .bind(3, phase.name)
        .bind(4, static_cast<std::int64_t>(phase.count));
    s.bind(5, phase.time_s).bind(6, phase.energy_j).bind(7, static_cast<std::int64_t>(phase.samples));
    s.bind(8, phase.method).run();
  }
  write_energy_uncertainty(db_, p, run_id, run);
  for (const auto& u : run.gpu_usage) {
    Statement s(
        db_, p,
        "INSERT INTO run_gpu_usage (run_id, gpu_index, uuid, expected, measured, job_seen, pids_json) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)");
    s.bind(1, run_id).bind(2, static_cast<std::int64_t>(u.gpu_index)).bind(3, u.uuid);
    s.bind(4, std::int64_t{u.expected}).bind(5, std::int64_t{u.measured});
    std::optional<std::int64_t> seen;
    if (u.job_seen) seen = *u.job_seen ? 1 : 0;
    s.bind(6, seen).bind(7, nlohmann::json(u.pids).dump()).run();
  }
  insert_node_energy(db_, p, run_id, run.node, run.phase_node);
  insert_cluster_nodes(db_, p, run_id, run.cluster_nodes);
  insert_run_output(db_, p, run_id, run.output);
  for (const auto& trace : run.traces) {
    Statement s(db_, p, "INSERT INTO traces (run_id, gpu_index, csv) VALUES (?, ?, ?)");
    s.bind(1, run_id).bind(2, static_cast<std::int64_t>(trace.gpu_index)).bind(3, trace.csv).run();
  }
  transaction.commit();
}

void ResultsStore::add_trace_csv(std::size_t plan_index, unsigned gpu_index, const std::string& csv) {
  Statement s(db_, path_.string(),
              "INSERT OR REPLACE INTO traces (run_id, gpu_index, csv) "
              "SELECT id, ?, ? FROM runs WHERE plan_index = ?");
  s.bind(1, static_cast<std::int64_t>(gpu_index))
      .bind(2, csv)
      .bind(3, static_cast<std::int64_t>(plan_index))
      .run();
  if (sqlite3_changes(db_) == 0) {
    throw Error(ErrorKind::kInternal,
                fmt::format("trace for plan index {} stored before its run", plan_index));
  }
}

void ResultsStore::add_tune_trace(const TuneTrace& trace) {
  const std::string p = path_.string();
  Transaction transaction(db_, p);
  insert_tune_trace(db_, p, trace);
  transaction.commit();
}

}  // namespace wattwise::store
