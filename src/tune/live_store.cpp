#include "tune/live_store.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/error.hpp"
#include "store/measured_run.hpp"
#include "store/results_store.hpp"
#include "tune/live_report.hpp"

namespace wattwise::tune {

store::TuneTrace tune_trace_of(const LiveTuningResult& r) {
  store::TuneTrace t;
  t.knob = knob_flag(r.knob);
  t.unit = knob_unit(r.knob);
  t.metric = r.metric;
  t.start_value = r.captured_value;
  t.settled_value = r.settled;
  t.profiling_iterations = r.profiling_iterations;
  t.iterations = r.iterations_seen;
  t.dry_run = r.dry_run;
  for (const auto& d : r.decisions)
    t.decisions.push_back({to_string(d.kind), d.value, d.at_iteration, d.estimate, d.interval_low,
                           d.interval_high, d.iterations, d.reason, d.estimate_of});
  for (const auto& c : r.changes) t.changes.push_back({c.value, c.at_s, c.at_iteration});
  for (const auto& s : r.settings) {
    store::TuneSettingRow row{s.value, s.iterations, s.time_s_mean, s.time_s_std, std::nullopt, std::nullopt};
    if (s.with_energy > 0) row.energy_j_mean = s.energy_j_mean;
    if (s.with_energy > 1) row.energy_j_std = s.energy_j_std;
    t.settings.push_back(row);
  }
  return t;
}

TuneStore TuneStore::check_new(const std::filesystem::path& path) {
  if (std::filesystem::exists(path))
    throw usage_error(fmt::format("{} exists already: give `tune --db` a new file", path.string()));
  const auto dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw environment_error(
        fmt::format("cannot write the results database in {}: {}; pass --db in a "
                    "writable directory",
                    dir.string(), std::strerror(errno)));
  return TuneStore(path, utc_now_iso8601());
}

void TuneStore::write(const measure::Measurement& m, const LiveTuningResult& result,
                      std::vector<store::StoredGpu> gpus, const std::string& settings_changed_by) const {
  store::StoreMeta meta;
  meta.command = fmt::format("tune {}", fmt::join(m.command, " "));
  meta.command_argv = m.command;
  meta.measurement_method = "per run: see runs.method; per iteration: docs/tune.md";
  const nlohmann::json plan = {{"tune",
                                {{"knob", knob_flag(result.knob)},
                                 {"metric", result.metric},
                                 {"captured_value", result.captured_value},
                                 {"dry_run", result.dry_run}}}};
  if (gpus.empty())
    for (const auto& g : m.gpu_energy)
      if (g.used_by_job) gpus.push_back({g.gpu.index, g.gpu.uuid, g.gpu.name, {}, {}, {}});
  store::ResultsStore db = store::ResultsStore::create(path_, meta, plan, gpus);
  plan::PlannedRun run;  // the job, once, at the settings the trace names
  db.add_run(store::record_of(run, m, {}, started_at_, utc_now_iso8601()));
  db.add_tune_trace(tune_trace_of(result));
  db.record_settings_changed_by(settings_changed_by);
}

}  // namespace wattwise::tune
