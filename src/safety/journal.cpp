#include "safety/journal.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.hpp"

namespace wattwise::safety {
namespace {

constexpr const char* kJournalPrefix = "settings-journal-";
constexpr int kJournalFormat = 1;

Error write_failure(const std::filesystem::path& path, const char* step) {
  return environment_error(
      fmt::format("cannot write settings journal {} ({}: {}): set WATTWISE_STATE_DIR to a "
                  "writable directory on a local disk",
                  path.string(), step, std::strerror(errno)));
}

nlohmann::json to_json(const Journal& journal) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& gpu : journal.gpus) {
    nlohmann::json entry = {{"uuid", gpu.uuid},
                            {"index", gpu.index},
                            {"name", gpu.name},
                            {"reset_sm_clocks", gpu.reset_sm_clocks},
                            {"reset_mem_clocks", gpu.reset_mem_clocks},
                            {"clocks_before", "unknown -> reset on restore"}};
    entry["power_limit_w"] = gpu.power_limit_w ? nlohmann::json(*gpu.power_limit_w) : nlohmann::json(nullptr);
    gpus.push_back(entry);
  }
  return {{"format", kJournalFormat},         {"tool", "wattwise"},   {"pid", journal.pid},
          {"created_at", journal.created_at}, {"host", journal.host}, {"gpus", gpus}};
}

Journal from_json(const nlohmann::json& json) {
  Journal journal;
  if (json.at("tool").get<std::string>() != "wattwise") throw std::runtime_error("not a wattwise journal");
  journal.pid = json.at("pid").get<long>();
  journal.created_at = json.at("created_at").get<std::string>();
  journal.host = json.at("host").get<std::string>();
  for (const auto& item : json.at("gpus")) {
    JournalEntry entry;
    entry.uuid = item.at("uuid").get<std::string>();
    entry.index = item.at("index").get<unsigned>();
    entry.name = item.at("name").get<std::string>();
    if (!item.at("power_limit_w").is_null()) entry.power_limit_w = item.at("power_limit_w").get<double>();
    entry.reset_sm_clocks = item.at("reset_sm_clocks").get<bool>();
    entry.reset_mem_clocks = item.at("reset_mem_clocks").get<bool>();
    journal.gpus.push_back(entry);
  }
  return journal;
}

void fsync_directory(const std::filesystem::path& dir, const std::filesystem::path& journal_path) {
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw write_failure(journal_path, "open directory");
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) throw write_failure(journal_path, "fsync directory");
}

}  // namespace

std::filesystem::path journal_path_for(const std::filesystem::path& state_dir, long pid) {
  return state_dir / fmt::format("{}{}.json", kJournalPrefix, pid);
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
  const std::string text = to_json(journal).dump(2) + "\n";
  const std::filesystem::path temp = path.string() + fmt::format(".tmp-{}", ::getpid());
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw write_failure(path, "create temporary file");
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Error error = write_failure(path, "write");
      ::close(fd);
      ::unlink(temp.c_str());
      throw error;
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    Error error = write_failure(path, "fsync");
    ::close(fd);
    ::unlink(temp.c_str());
    throw error;
  }
  ::close(fd);
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    Error error = write_failure(path, "rename");
    ::unlink(temp.c_str());
    throw error;
  }
  fsync_directory(path.parent_path(), path);
}

Journal read_journal(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) {
    throw environment_error(
        fmt::format("cannot read settings journal {}: check its permissions (run as the user "
                    "that wrote it, or root)",
                    path.string()));
  }
  std::stringstream text;
  text << in.rdbuf();
  try {
    return from_json(nlohmann::json::parse(text.str()));
  } catch (const std::exception& e) {
    throw data_error(
        fmt::format("settings journal {} is not readable ({}): restore the GPU settings by hand "
                    "(nvidia-smi -pl / -rgc / -rmc), then delete the file",
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
  int fd = ::open(path.parent_path().empty() ? "." : path.parent_path().c_str(),
                  O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
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
