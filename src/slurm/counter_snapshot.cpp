#include "slurm/counter_snapshot.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/version.hpp"

namespace wattwise::slurm {

using nlohmann::json;

CounterSnapshot read_counters(hw::GpuSystem& system, const std::vector<std::size_t>& positions,
                              double time_unix_s) {
  CounterSnapshot snapshot;
  snapshot.time_unix_s = time_unix_s;
  for (const std::size_t position : positions) {
    hw::GpuReadings& gpu = system.gpu(position);
    CounterReading reading;
    reading.index = gpu.identity().index;
    reading.uuid = gpu.identity().uuid;
    try {
      reading.energy_mj = gpu.energy_mj();
    } catch (const std::exception&) {
      // The epilog then says null for this GPU: one lost GPU must not lose the others' figures.
    }
    snapshot.gpus.push_back(reading);
  }
  return snapshot;
}

json to_json(const CounterSnapshot& snapshot) {
  json gpus = json::array();
  for (const auto& g : snapshot.gpus)
    gpus.push_back({{"index", g.index},
                    {"uuid", g.uuid},
                    {"energy_mj", g.energy_mj ? json(*g.energy_mj) : json(nullptr)}});
  return {{"tool", "wattwise"},
          {"version", kVersion},
          {"kind", "energy-counters"},
          {"time_unix_s", snapshot.time_unix_s},
          {"gpus", gpus}};
}

CounterSnapshot counter_snapshot_from_json(const json& j, const std::string& source) {
  try {
    if (j.at("kind") != "energy-counters") throw std::invalid_argument("its kind is not energy-counters");
    CounterSnapshot snapshot;
    snapshot.time_unix_s = j.at("time_unix_s").get<double>();
    for (const auto& g : j.at("gpus")) {
      CounterReading reading;
      reading.index = g.at("index").get<unsigned>();
      reading.uuid = g.at("uuid").get<std::string>();
      if (!g.at("energy_mj").is_null()) reading.energy_mj = g.at("energy_mj").get<std::uint64_t>();
      snapshot.gpus.push_back(reading);
    }
    return snapshot;
  } catch (const std::exception& e) {
    throw data_error(fmt::format("{} is no `wattwise counter` snapshot ({}): give the file the prolog wrote",
                                 source, e.what()));
  }
}

json energy_between(const CounterSnapshot& before, const CounterSnapshot& after) {
  json gpus = json::array();
  double total_j = 0;
  bool total_known = !after.gpus.empty();
  for (const auto& now : after.gpus) {
    json energy_j = nullptr;
    for (const auto& then : before.gpus) {
      if (then.uuid != now.uuid || !then.energy_mj || !now.energy_mj || *now.energy_mj < *then.energy_mj)
        continue;
      energy_j = static_cast<double>(*now.energy_mj - *then.energy_mj) / 1000.0;
    }
    if (energy_j.is_number())
      total_j += energy_j.get<double>();
    else
      total_known = false;
    gpus.push_back({{"index", now.index}, {"uuid", now.uuid}, {"energy_j", energy_j}});
  }
  return {{"tool", "wattwise"},
          {"version", kVersion},
          {"kind", "energy-between"},
          {"since_unix_s", before.time_unix_s},
          {"until_unix_s", after.time_unix_s},
          {"elapsed_s", after.time_unix_s - before.time_unix_s},
          {"method", "counter"},
          {"energy_j", total_known ? json(total_j) : json(nullptr)},
          {"gpus", gpus}};
}

}  // namespace wattwise::slurm
