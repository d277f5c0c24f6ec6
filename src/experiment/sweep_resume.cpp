#include "experiment/sweep_resume.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "store/results_store.hpp"

namespace wattwise::experiment {

namespace {

nlohmann::json text_or_null(const std::optional<std::string>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json();
}

// A stored option as the text the flag would have been given: absent for null, numbers (older stores) as
// their text.
std::optional<std::string> stored_text(const nlohmann::json& options, const char* name) {
  if (!options.contains(name) || options.at(name).is_null()) return std::nullopt;
  const auto& value = options.at(name);
  if (value.is_string()) return value.get<std::string>();
  return value.dump();
}

// The node-power flags: text or absent (anything but a string reads as not given).
std::optional<std::string> stored_string(const nlohmann::json& options, const char* name) {
  if (!options.contains(name) || !options.at(name).is_string()) return std::nullopt;
  return options.at(name).get<std::string>();
}

template <typename T>
void read_if_present(const nlohmann::json& json, const char* name, std::optional<T>& value) {
  if (json.contains(name)) value = json.at(name).get<T>();
}

}  // namespace

nlohmann::json sweep_options_json(const StoredSweepOptions& o) {
  nlohmann::json json = {{"gpus", text_or_null(o.gpus)},
                         {"other_gpus", o.other_gpus},
                         {"timeout_s", text_or_null(o.timeout_s)},
                         {"trace_dir", o.trace_dir},
                         {"job_gpus", text_or_null(o.job_gpus)},
                         {"energy_scope", text_or_null(o.energy_scope)},
                         {"max_slowdown", text_or_null(o.max_slowdown)},
                         {"max_failures", o.max_failures},
                         {"read_only", o.read_only},
                         {"simulate", o.simulate},
                         // The node-power flags, at the top level like the others.
                         {"meter_cmd", text_or_null(o.meter_cmd)},
                         {"meter_timeout_s", text_or_null(o.meter_timeout_s)},
                         {"node_interval_ms", text_or_null(o.node_interval_ms)},
                         {"no_powercap", o.no_powercap}};
  if (o.slurm) {
    json["slurm"] = true;
    json["srun_args"] = o.srun_args;
  }
  if (o.adaptive) {
    nlohmann::json adaptive = {{"metrics", o.adaptive->metrics}};
    if (o.adaptive->budget) adaptive["budget"] = *o.adaptive->budget;
    if (o.adaptive->precision) adaptive["precision"] = *o.adaptive->precision;
    json["adaptive"] = adaptive;
  }
  if (o.nvtx_domains) json["nvtx"] = {{"domains", *o.nvtx_domains}};
  if (o.interval_ms) json["interval_ms"] = *o.interval_ms;
  if (o.cooldown) json["cooldown"] = *o.cooldown;
  if (o.sim) {
    nlohmann::json sim = nlohmann::json::object();
    if (o.sim->gpus) sim["gpus"] = *o.sim->gpus;
    if (o.sim->epochs) sim["epochs"] = *o.sim->epochs;
    if (o.sim->batch) sim["batch"] = *o.sim->batch;
    if (o.sim->samples_per_epoch) sim["samples"] = *o.sim->samples_per_epoch;
    if (o.sim->iteration_markers_per_epoch) sim["iteration_markers"] = *o.sim->iteration_markers_per_epoch;
    json["sim"] = sim;
  }
  return json;
}

StoredSweepOptions sweep_options_from_json(const nlohmann::json& json) {
  StoredSweepOptions o;
  o.gpus = stored_text(json, "gpus");
  o.other_gpus = json.value("other_gpus", o.other_gpus);
  o.timeout_s = stored_text(json, "timeout_s");
  o.trace_dir = json.value("trace_dir", std::string());
  o.job_gpus = stored_text(json, "job_gpus");
  o.energy_scope = stored_text(json, "energy_scope");
  o.max_slowdown = stored_text(json, "max_slowdown");
  o.max_failures = json.value("max_failures", o.max_failures);
  o.read_only = json.value("read_only", false);
  o.simulate = json.value("simulate", std::string());
  o.slurm = json.value("slurm", false);
  o.srun_args = json.value("srun_args", std::vector<std::string>{});
  o.meter_cmd = stored_string(json, "meter_cmd");
  o.meter_timeout_s = stored_string(json, "meter_timeout_s");
  o.node_interval_ms = stored_string(json, "node_interval_ms");
  o.no_powercap = json.value("no_powercap", false);
  if (json.contains("adaptive")) {
    const auto& a = json.at("adaptive");
    StoredSweepOptions::Adaptive adaptive;
    read_if_present(a, "budget", adaptive.budget);
    read_if_present(a, "precision", adaptive.precision);
    adaptive.metrics = a.value("metrics", std::vector<std::string>{});
    o.adaptive = adaptive;
  }
  if (json.contains("nvtx") && json.at("nvtx").is_object())
    o.nvtx_domains = json.at("nvtx").value("domains", std::string());
  o.interval_ms = stored_text(json, "interval_ms");
  read_if_present(json, "cooldown", o.cooldown);
  if (json.contains("sim")) {
    const auto& s = json.at("sim");
    StoredSweepOptions::Simulation sim;
    read_if_present(s, "gpus", sim.gpus);
    read_if_present(s, "epochs", sim.epochs);
    read_if_present(s, "batch", sim.batch);
    read_if_present(s, "samples", sim.samples_per_epoch);
    read_if_present(s, "iteration_markers", sim.iteration_markers_per_epoch);
    o.sim = sim;
  }
  return o;
}

StoredSweep load_stored_sweep(const std::filesystem::path& db) {
  const auto stored = store::ResultsStore::open_read_only(db);
  StoredSweep sweep;
  sweep.plan = stored.plan();
  try {
    nlohmann::json options = nlohmann::json::object();
    nlohmann::json argv = nlohmann::json::array();
    if (!stored.meta("sweep_json").empty()) options = nlohmann::json::parse(stored.meta("sweep_json"));
    if (!stored.meta("command_json").empty()) argv = nlohmann::json::parse(stored.meta("command_json"));
    if (options.empty()) {
      throw usage_error(fmt::format(
          "{} was written by an older wattwise that did not store its options: give the knobs and the "
          "command again with --resume",
          db.string()));
    }
    sweep.command = argv.get<std::vector<std::string>>();
    sweep.options = sweep_options_from_json(options);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw data_error(
        fmt::format("{}: the stored sweep options are not readable ({}): give the knobs and the "
                    "command again with --resume",
                    db.string(), e.what()));
  }
  return sweep;
}

}  // namespace wattwise::experiment
