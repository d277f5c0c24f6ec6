#include "fake_state.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace wattwise::fake_nvml {

namespace {

// Holds an flock on the state's lock file for its lifetime.
class StateLock {
 public:
  StateLock(const std::string& state_file, int operation) {
    fd_ = ::open((state_file + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw std::runtime_error("fake NVML: cannot open lock file for " + state_file);
    while (::flock(fd_, operation) != 0) {
      if (errno != EINTR) {
        ::close(fd_);
        throw std::runtime_error("fake NVML: cannot lock " + state_file + ".lock");
      }
    }
  }
  ~StateLock() { ::close(fd_); }  // closing releases the lock
  StateLock(const StateLock&) = delete;
  StateLock& operator=(const StateLock&) = delete;

 private:
  int fd_ = -1;
};

nlohmann::json lock_to_json(const std::optional<std::pair<unsigned, unsigned>>& lock) {
  if (!lock) return nullptr;
  return nlohmann::json::array({lock->first, lock->second});
}

std::optional<std::pair<unsigned, unsigned>> lock_from_json(const nlohmann::json& j) {
  if (j.is_null()) return std::nullopt;
  return std::make_pair(j.at(0).get<unsigned>(), j.at(1).get<unsigned>());
}

FakeState read_unlocked(const FakeConfig& config) {
  FakeState state;
  for (const FakeGpuConfig& gpu : config.gpus) {
    FakeGpuSettings settings;
    settings.power_limit_mw = static_cast<unsigned>(gpu.initial_limit_w * 1000.0 + 0.5);
    state[gpu.uuid] = settings;
  }
  std::ifstream in(config.state_file);
  if (!in) return state;
  nlohmann::json j;
  try {
    in >> j;
  } catch (const std::exception&) {
    return state;  // never written completely (writes are atomic, so only an empty new file)
  }
  for (auto& [uuid, s] : j.items()) {
    FakeGpuSettings settings;
    settings.power_limit_mw = s.at("power_limit_mw").get<unsigned>();
    settings.sm_lock_mhz = lock_from_json(s.at("sm_lock_mhz"));
    settings.mem_lock_mhz = lock_from_json(s.at("mem_lock_mhz"));
    settings.anchor_energy_j = s.at("anchor_energy_j").get<double>();
    settings.anchor_time_s = s.at("anchor_time_s").get<double>();
    state[uuid] = settings;
  }
  return state;
}

void write_unlocked(const FakeConfig& config, const FakeState& state) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [uuid, s] : state) {
    j[uuid] = {{"power_limit_mw", s.power_limit_mw},
               {"sm_lock_mhz", lock_to_json(s.sm_lock_mhz)},
               {"mem_lock_mhz", lock_to_json(s.mem_lock_mhz)},
               {"anchor_energy_j", s.anchor_energy_j},
               {"anchor_time_s", s.anchor_time_s}};
  }
  const std::string temp = config.state_file + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temp, std::ios::trunc);
    out << j.dump(2) << '\n';
    if (!out) throw std::runtime_error("fake NVML: cannot write " + temp);
  }
  if (std::rename(temp.c_str(), config.state_file.c_str()) != 0) {
    throw std::runtime_error("fake NVML: cannot replace " + config.state_file);
  }
}

}  // namespace

FakeState read_fake_state(const FakeConfig& config) {
  StateLock lock(config.state_file, LOCK_SH);
  return read_unlocked(config);
}

void update_fake_state(const FakeConfig& config, const std::function<void(FakeState&)>& change) {
  StateLock lock(config.state_file, LOCK_EX);
  FakeState state = read_unlocked(config);
  change(state);
  write_unlocked(config, state);
}

}  // namespace wattwise::fake_nvml
