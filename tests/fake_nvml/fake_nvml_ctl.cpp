// fake_nvml_ctl: shows (or resets) the persistent settings of the fake NVML driver, for tests and people.
//   WATTWISE_FAKE_NVML_CONFIG=cfg.json fake_nvml_ctl show    -> JSON: uuid -> power_limit_w, sm/mem locks
//   WATTWISE_FAKE_NVML_CONFIG=cfg.json fake_nvml_ctl reset   -> back to the configured initial settings
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "fake_config.hpp"
#include "fake_state.hpp"

using namespace wattwise::fake_nvml;

int main(int argc, char** argv) {
  const std::string command = argc > 1 ? argv[1] : "";
  if (command != "show" && command != "reset") {
    std::fprintf(stderr, "usage: WATTWISE_FAKE_NVML_CONFIG=FILE fake_nvml_ctl show|reset\n");
    return 2;
  }
  try {
    const FakeConfig config = load_fake_config(fake_config_path_from_env());
    if (command == "reset") {
      update_fake_state(config, [&](FakeState& state) {
        state.clear();
        for (const FakeGpuConfig& gpu : config.gpus) {
          state[gpu.uuid].power_limit_mw = static_cast<unsigned>(gpu.initial_limit_w * 1000.0 + 0.5);
        }
      });
      return 0;
    }
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [uuid, s] : read_fake_state(config)) {
      const auto lock = [](const auto& l) {
        return l ? nlohmann::json::array({l->first, l->second}) : nlohmann::json();
      };
      out[uuid] = {{"power_limit_w", s.power_limit_mw / 1000.0},
                   {"sm_lock_mhz", lock(s.sm_lock_mhz)},
                   {"mem_lock_mhz", lock(s.mem_lock_mhz)}};
    }
    std::printf("%s\n", out.dump(2).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fake_nvml_ctl: %s\n", e.what());
    return 1;
  }
  return 0;
}
