// HAZARD ZONE (safety). A mistake here leaves a GPU capped (a setting not journaled, not restored, or changed
// under --read-only). Before a change here lands, run test_safety, test_safety_unit, test_experiment and
// `ctest -L faults` (Release build; docs/architecture.md "Hazard zones").

#include "safety/journal.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"
#include "core/error.hpp"

namespace wattwise::safety {
namespace {

constexpr const char* kJournalPrefix = "settings-journal-";
constexpr int kJournalFormat = 1;
// A journal of a few GPUs is a few hundred bytes; anything far larger is not one of ours.
constexpr std::size_t kMaxJournalBytes = 1 << 20;
constexpr std::size_t kMaxGpus = 4096;
constexpr std::size_t kMaxTextBytes = 256;
// No GPU takes a limit near this; a larger value is a damaged or forged journal, not a setting.
constexpr double kMaxPowerLimitW = 100000;

nlohmann::json to_json(const Journal& journal) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& gpu : journal.gpus) {
    nlohmann::json entry = {
        {"uuid", gpu.uuid},
        {"index", gpu.index},
        {"name", gpu.name},
        {"reset_sm_clocks", gpu.reset_sm_clocks},
        {"reset_mem_clocks", gpu.reset_mem_clocks},
        {"clocks_before", "unknown (NVML cannot read locked clocks) -> reset on restore"}};
    entry["power_limit_w"] = gpu.power_limit_w ? nlohmann::json(*gpu.power_limit_w) : nlohmann::json(nullptr);
    gpus.push_back(entry);
  }
  return {{"format", kJournalFormat},         {"tool", "wattwise"},   {"pid", journal.pid},
          {"created_at", journal.created_at}, {"host", journal.host}, {"gpus", gpus}};
}

// Every check of a hostile file ends here: one line, no content of the file quoted beyond what was checked.
[[noreturn]] void refuse(const std::string& what) {
  throw data_error(fmt::format("settings journal refused: {}", what));
}

const nlohmann::json& member(const nlohmann::json& object, const char* key, const std::string& where) {
  const auto found = object.find(key);
  if (found == object.end()) refuse(fmt::format("{} has no \"{}\"", where, key));
  return *found;
}

// Text we print back to people: bounded, and without control characters (no terminal escapes).
std::string text_member(const nlohmann::json& object, const char* key, const std::string& where,
                        bool allow_empty) {
  const nlohmann::json& value = member(object, key, where);
  if (!value.is_string()) refuse(fmt::format("{} \"{}\" is not a string", where, key));
  const auto& text = value.get_ref<const std::string&>();
  if (text.size() > kMaxTextBytes) refuse(fmt::format("{} \"{}\" is too long", where, key));
  if (!allow_empty && text.empty()) refuse(fmt::format("{} \"{}\" is empty", where, key));
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7f) refuse(fmt::format("{} \"{}\" holds control characters", where, key));
  }
  return text;
}

bool bool_member(const nlohmann::json& object, const char* key, const std::string& where) {
  const nlohmann::json& value = member(object, key, where);
  if (!value.is_boolean()) refuse(fmt::format("{} \"{}\" is not true or false", where, key));
  return value.get<bool>();
}

JournalEntry entry_from_json(const nlohmann::json& item, std::size_t position) {
  const std::string where = fmt::format("gpus[{}]", position);
  if (!item.is_object()) refuse(where + " is not an object");
  JournalEntry entry;
  entry.uuid = text_member(item, "uuid", where, false);
  for (unsigned char c : entry.uuid) {
    if (!std::isalnum(c) && c != '-' && c != '_' && c != '.' && c != ':')
      refuse(fmt::format("{} \"uuid\" is not a GPU UUID", where));
  }
  const nlohmann::json& index = member(item, "index", where);
  if (!index.is_number_unsigned() || index.get<std::uint64_t>() > UINT_MAX)
    refuse(fmt::format("{} \"index\" is not a GPU index", where));
  entry.index = index.get<unsigned>();
  entry.name = text_member(item, "name", where, true);
  const nlohmann::json& limit = member(item, "power_limit_w", where);
  if (!limit.is_null()) {
    if (!limit.is_number()) refuse(fmt::format("{} \"power_limit_w\" is not a number", where));
    const double watts = limit.get<double>();
    if (!std::isfinite(watts) || watts <= 0 || watts > kMaxPowerLimitW)
      refuse(fmt::format("{} \"power_limit_w\" {} is not a power limit", where, watts));
    entry.power_limit_w = watts;
  }
  entry.reset_sm_clocks = bool_member(item, "reset_sm_clocks", where);
  entry.reset_mem_clocks = bool_member(item, "reset_mem_clocks", where);
  return entry;
}

Journal from_json(const nlohmann::json& json) {
  if (!json.is_object()) refuse("not a JSON object");
  const nlohmann::json& tool = member(json, "tool", "the journal");
  if (!tool.is_string() || tool.get_ref<const std::string&>() != "wattwise") refuse("not a wattwise journal");
  // Checked before anything else is read: a journal of another format may mean something else by the same
  // names, so applying it would be a guess.
  const nlohmann::json& format = member(json, "format", "the journal");
  if (!format.is_number_integer() || format.get<std::int64_t>() != kJournalFormat) {
    refuse(
        fmt::format("unknown format {} (this wattwise reads format {}): restore with the wattwise "
                    "version that wrote it",
                    format.is_number() || format.is_string() ? format.dump() : std::string("(not a number)"),
                    kJournalFormat));
  }
  Journal journal;
  const nlohmann::json& pid = member(json, "pid", "the journal");
  if (!pid.is_number_integer() || pid.get<std::int64_t>() <= 0 || pid.get<std::int64_t>() > INT_MAX)
    refuse("\"pid\" is not a process id");
  journal.pid = static_cast<long>(pid.get<std::int64_t>());
  journal.created_at = text_member(json, "created_at", "the journal", true);
  journal.host = text_member(json, "host", "the journal", true);
  const nlohmann::json& gpus = member(json, "gpus", "the journal");
  if (!gpus.is_array()) refuse("\"gpus\" is not a list");
  if (gpus.size() > kMaxGpus) refuse("\"gpus\" lists more GPUs than a machine has");
  for (std::size_t i = 0; i < gpus.size(); ++i) journal.gpus.push_back(entry_from_json(gpus[i], i));
  return journal;
}

}  // namespace

std::filesystem::path journal_path_for(const std::filesystem::path& state_dir, long pid) {
  return state_dir / fmt::format("{}{}.json", kJournalPrefix, pid);
}

std::filesystem::path journal_path_for(const std::filesystem::path& state_dir, long pid, unsigned long part) {
  return state_dir / fmt::format("{}{}-{}.json", kJournalPrefix, pid, part);
}

std::vector<std::filesystem::path> find_journals(const std::filesystem::path& state_dir) {
  std::vector<std::filesystem::path> found;
  std::error_code ec;
  for (const auto& item : std::filesystem::directory_iterator(state_dir, ec)) {
    const std::string name = item.path().filename().string();
    if (name.starts_with(kJournalPrefix) && name.ends_with(".json")) found.push_back(item.path());
  }
  std::sort(found.begin(), found.end());
  return found;
}

void write_journal(const std::filesystem::path& path, const Journal& journal) {
  write_file_atomically(path, to_json(journal).dump(2) + "\n", [](const WriteFailure& failure) {
    return environment_error(
        fmt::format("cannot write settings journal {} ({}: {}): set WATTWISE_STATE_DIR to a "
                    "writable directory on a local disk",
                    failure.target.string(), failure.step, std::strerror(failure.error_number)));
  });
}

Journal parse_journal(std::string_view text) {
  try {
    if (text.size() > kMaxJournalBytes) refuse(fmt::format("{} bytes is far too large", text.size()));
    nlohmann::json json =
        nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded()) refuse("not valid JSON");
    return from_json(json);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    // nlohmann's own type errors, or memory: still only a refused journal to the caller.
    throw data_error(fmt::format("settings journal refused: {}", e.what()));
  }
}

Journal read_journal(const std::filesystem::path& path) {
  // O_NOFOLLOW: a journal name that is a link to another file is not a journal (and must not make root print
  // or apply that file). O_NONBLOCK: a FIFO planted under the name cannot hang us.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ELOOP)
      throw data_error(
          fmt::format("settings journal {} is a symbolic link: refused; delete it", path.string()));
    throw environment_error(
        fmt::format("cannot read settings journal {}: {}: check its permissions (run as the user "
                    "that wrote it, or root)",
                    path.string(), std::strerror(errno)));
  }
  struct stat info {};
  std::string text;
  std::string problem;
  if (::fstat(fd, &info) != 0) {
    problem = std::strerror(errno);
  } else if (!S_ISREG(info.st_mode)) {
    problem = "not a regular file";
  } else if (info.st_uid != ::geteuid() && info.st_uid != 0) {
    problem = fmt::format("owned by user {}, not by this user or root", info.st_uid);
  } else if (static_cast<std::size_t>(info.st_size) > kMaxJournalBytes) {
    problem = fmt::format("{} bytes is far too large", info.st_size);
  } else {
    char buffer[4096];
    while (true) {
      const ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        problem = std::strerror(errno);
        break;
      }
      if (n == 0) break;
      text.append(buffer, static_cast<std::size_t>(n));
      if (text.size() > kMaxJournalBytes) {
        problem = "far too large";
        break;
      }
    }
  }
  ::close(fd);
  if (!problem.empty()) {
    throw data_error(
        fmt::format("settings journal {} refused: {}: restore the GPU settings by hand "
                    "(nvidia-smi -pl / -rgc / -rmc), then delete the file",
                    path.string(), problem));
  }
  try {
    return parse_journal(text);
  } catch (const Error& e) {
    throw data_error(
        fmt::format("{}: {} (the file is kept: restore the GPU settings by hand with "
                    "nvidia-smi -pl / -rgc / -rmc, then delete it)",
                    path.string(), e.what()));
  }
}

void remove_journal(const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::remove(path, ec);
  if (ec) {
    throw environment_error(
        fmt::format("cannot remove settings journal {}: {}: delete it by hand", path.string(), ec.message()));
  }
  // Make the removal durable too, or a power loss could bring back a journal of settings already restored.
  sync_directory_of(path);
}

Journal new_journal() {
  Journal journal;
  journal.pid = ::getpid();
  journal.created_at = utc_now_iso8601();
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) journal.host = host;
  return journal;
}

}  // namespace wattwise::safety
