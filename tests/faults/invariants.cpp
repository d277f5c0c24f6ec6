#include "invariants.hpp"

#include <signal.h>
#include <sqlite3.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "../support/proc_file.hpp"

namespace wattwise::faults {
namespace {

std::vector<std::string> lines_of(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

std::string lock_text(const std::optional<std::pair<unsigned, unsigned>>& lock) {
  return lock ? fmt::format("{}-{} MHz", lock->first, lock->second) : "unlocked";
}

Violations compare_settings(const fake_nvml::FakeState& now, const fake_nvml::FakeState& captured,
                            const std::set<std::string>& lost) {
  Violations v;
  for (const auto& [uuid, before] : captured) {
    if (lost.count(uuid)) continue;
    const auto found = now.find(uuid);
    if (found == now.end()) continue;
    const auto& after = found->second;
    if (after.power_limit_mw != before.power_limit_mw)
      v.push_back(fmt::format("GPU changed: {} power limit {} W, captured {} W", uuid,
                              after.power_limit_mw / 1000.0, before.power_limit_mw / 1000.0));
    if (after.sm_lock_mhz != before.sm_lock_mhz)
      v.push_back(fmt::format("GPU changed: {} SM clocks {}, captured {}", uuid, lock_text(after.sm_lock_mhz),
                              lock_text(before.sm_lock_mhz)));
    if (after.mem_lock_mhz != before.mem_lock_mhz)
      v.push_back(fmt::format("GPU changed: {} memory clocks {}, captured {}", uuid,
                              lock_text(after.mem_lock_mhz), lock_text(before.mem_lock_mhz)));
  }
  return v;
}

bool alive(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
  // A zombie has finished; it waits for its parent (or init) to reap it.
  std::string text = wattwise::testing::read_proc_file("/proc/" + std::to_string(pid) + "/stat");
  const auto close = text.rfind(')');
  return close == std::string::npos || close + 2 >= text.size() || text[close + 2] != 'Z';
}

std::size_t count_commas(const std::string& line) {
  std::size_t n = 0;
  bool quoted = false;
  for (char c : line) {
    if (c == '"') quoted = !quoted;
    if (c == ',' && !quoted) ++n;
  }
  return n;
}

// The trace as add_trace_csv stored it: comment lines, a header, rows with the header's columns.
std::string check_trace(const std::string& csv) {
  if (csv.empty()) return "empty";
  if (csv.back() != '\n') return "cut mid-line";
  std::istringstream in(csv);
  std::optional<std::size_t> columns;
  std::size_t rows = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    if (!columns) {
      columns = count_commas(line);
      continue;
    }
    if (count_commas(line) != *columns)
      return fmt::format("row {} has the wrong number of columns", rows + 1);
    ++rows;
  }
  if (!columns) return "no header";
  if (rows == 0) return "no rows";
  return "";
}

}  // namespace

Violations gpus_at_captured(const FaultWorld& world, const fake_nvml::FakeState& captured,
                            const std::set<std::string>& lost, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    Violations v = compare_settings(world.gpu_settings(), captured, lost);
    if (v.empty() || std::chrono::steady_clock::now() > deadline) return v;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

Violations no_orphans(const FaultWorld& world, std::chrono::milliseconds timeout) {
  std::vector<pid_t> pids;
  for (const auto& line : lines_of(world.job_dir() / "pids")) pids.push_back(std::stoi(line));
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<pid_t> living;
  while (true) {
    living.clear();
    for (pid_t pid : pids)
      if (alive(pid)) living.push_back(pid);
    if (living.empty() || std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  Violations v;
  for (pid_t pid : living) {
    v.push_back(fmt::format("orphan: job process {} still alive after wattwise ended", pid));
    ::kill(pid, SIGKILL);
  }
  // The next trial's job starts with an empty list.
  std::filesystem::remove(world.job_dir() / "pids");
  return v;
}

Violations runs_stored_once(const FaultWorld& world, const std::filesystem::path& db,
                            const StoreExpectations& expect) {
  Violations v;
  const auto done = lines_of(world.job_dir() / "done");
  const auto cut = lines_of(world.job_dir() / "cut");
  std::multiset<std::string> stored_limits, succeeded_limits;
  if (std::filesystem::exists(db)) {
    sqlite3* handle = nullptr;
    // Read-write: after a SIGKILL the database may have a hot rollback journal, which only a writer can
    // roll back (as the next `--resume` would).
    if (sqlite3_open_v2(db.c_str(), &handle, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
      v.push_back("database: cannot open " + db.string());
      sqlite3_close(handle);
      return v;
    }
    sqlite3_busy_timeout(handle, 5000);
    int tables = 0;
    sqlite3_exec(
        handle, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'runs'",
        [](void* out, int, char** values, char**) {
          *static_cast<int*>(out) = std::atoi(values[0]);
          return 0;
        },
        &tables, nullptr);
    if (tables == 0) {
      // The file exists but its tables were never made: a creation cut half-way (a full disk).
      v.push_back("database: " + db.filename().string() + " left without its tables");
      sqlite3_close(handle);
      handle = nullptr;
    }
    const auto each_row = [&](const char* sql, const std::function<void(sqlite3_stmt*)>& row) {
      sqlite3_stmt* statement = nullptr;
      if (sqlite3_prepare_v2(handle, sql, -1, &statement, nullptr) != SQLITE_OK) {
        v.push_back(fmt::format("database: {} ({})", sqlite3_errmsg(handle), sql));
        return;
      }
      while (sqlite3_step(statement) == SQLITE_ROW) row(statement);
      sqlite3_finalize(statement);
    };
    const auto text = [](sqlite3_stmt* s, int column) {
      const auto* t = sqlite3_column_text(s, column);
      return t ? std::string(reinterpret_cast<const char*>(t)) : std::string();
    };
    std::map<long long, int> per_plan_index;
    if (handle)
      each_row(
          "SELECT r.id, r.plan_index, r.exit_status, r.error, s.value FROM runs r LEFT JOIN run_settings s "
          "ON s.run_id = r.id AND s.knob = 'power_limit_w'",
          [&](sqlite3_stmt* s) {
            ++per_plan_index[sqlite3_column_int64(s, 1)];
            const std::string limit = text(s, 4);
            stored_limits.insert(limit);
            const bool success = sqlite3_column_type(s, 2) != SQLITE_NULL && sqlite3_column_int(s, 2) == 0 &&
                                 text(s, 3).empty();
            if (success) succeeded_limits.insert(limit);
          });
    for (const auto& [index, count] : per_plan_index)
      if (count != 1) v.push_back(fmt::format("database: plan index {} stored {} times", index, count));
    if (handle && expect.traces) {
      std::map<long long, int> traces_per_run;
      each_row(
          "SELECT r.id, t.gpu_index, t.csv, r.plan_index, r.error FROM runs r LEFT JOIN traces t ON t.run_id = "
          "r.id WHERE r.exit_status IS NOT NULL",
          [&](sqlite3_stmt* s) {
            if (sqlite3_column_type(s, 1) == SQLITE_NULL) {
              v.push_back(
                  fmt::format("database: run of plan index {} has no trace", sqlite3_column_int64(s, 3)));
              return;
            }
            ++traces_per_run[sqlite3_column_int64(s, 0)];
            const std::string problem = check_trace(text(s, 2));
            // A run stored as failed may hold a header-only trace: its GPU was lost before the run's first
            // reading (the loss came during the sweep's set-up), so there is nothing to keep for it.
            const bool failed_run = sqlite3_column_type(s, 4) != SQLITE_NULL;
            if (!problem.empty() && !(problem == "no rows" && failed_run))
              v.push_back(fmt::format("database: trace of plan index {} GPU {}: {}",
                                      sqlite3_column_int64(s, 3), sqlite3_column_int(s, 1), problem));
          });
      for (const auto& [run, count] : traces_per_run)
        if (count != static_cast<int>(expect.gpu_count))
          v.push_back(
              fmt::format("database: run id {} has traces of {} GPUs, not {}", run, count, expect.gpu_count));
    }
    sqlite3_close(handle);
  }
  int lost = 0;
  std::multiset<std::string> unmatched = stored_limits;
  for (const auto& limit : done) {
    const auto found = unmatched.find(limit);
    if (found != unmatched.end()) {
      unmatched.erase(found);
    } else {
      ++lost;
    }
  }
  if (lost > expect.may_lose)
    v.push_back(
        fmt::format("run lost: {} job(s) ran to their end but are not in the database (done: {}, "
                    "stored: {})",
                    lost, done.size(), stored_limits.size()));
  for (const auto& limit : cut) {
    // A job that exits 0 on SIGINT was cut: its run is not a success. (A limit both done and cut is a
    // repeat; the suite's plans have none.)
    if (succeeded_limits.count(limit) && !std::count(done.begin(), done.end(), limit))
      v.push_back(
          fmt::format("cut run stored as a success: the job at {} W exited 0 on the stop signal", limit));
  }
  std::filesystem::remove(world.job_dir() / "done");
  std::filesystem::remove(world.job_dir() / "cut");
  return v;
}

Violations plan_complete(const std::filesystem::path& db, std::size_t count) {
  Violations v;
  sqlite3* handle = nullptr;
  if (sqlite3_open_v2(db.c_str(), &handle, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    sqlite3_close(handle);
    return {"database: cannot open " + db.string()};
  }
  std::map<long long, int> successes;
  sqlite3_stmt* statement = nullptr;
  if (sqlite3_prepare_v2(handle, "SELECT plan_index, exit_status = 0 AND error = '' FROM runs", -1,
                         &statement, nullptr) == SQLITE_OK) {
    while (sqlite3_step(statement) == SQLITE_ROW)
      successes[sqlite3_column_int64(statement, 0)] += sqlite3_column_int(statement, 1) ? 1 : 100;
  } else {
    v.push_back(std::string("database: ") + sqlite3_errmsg(handle));
  }
  sqlite3_finalize(statement);
  sqlite3_close(handle);
  for (std::size_t i = 0; i < count; ++i) {
    const auto found = successes.find(static_cast<long long>(i));
    if (found == successes.end())
      v.push_back(fmt::format("after --resume: plan index {} is missing", i));
    else if (found->second != 1)
      v.push_back(fmt::format("after --resume: plan index {} is not stored once as a success", i));
  }
  return v;
}

Violations clear_outcome(const Finished& f, const std::set<int>& documented, const std::set<int>& job_codes) {
  Violations v;
  if (f.hung) v.push_back("hung: wattwise still ran at the guard time-out");
  if (!documented.count(f.exit_code))
    v.push_back(fmt::format("exit code {} is not one documented for this case", f.exit_code));
  if (f.err.find("terminate called") != std::string::npos)
    v.push_back("crash: \"terminate called\" on stderr");
  if (f.err.find("internal error") != std::string::npos) v.push_back("\"internal error\" on stderr");
  if (f.exit_code != 0 && !job_codes.count(f.exit_code) && f.err.find("wattwise: ") == std::string::npos)
    v.push_back("no \"wattwise: \" line on stderr saying why it stopped");
  return v;
}

Violations no_journal_left(const FaultWorld& world, const Finished& f) {
  Violations v;
  if (f.exit_code != 0 && f.err.find("wattwise restore") != std::string::npos) return v;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(world.state_dir(), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("settings-journal-", 0) == 0 && name.find(".tmp") == std::string::npos)
      v.push_back("journal left behind without a word: " + name);
  }
  return v;
}

std::string describe(const std::string& trial, std::uint64_t seed, const Violations& violations,
                     const Finished& f) {
  std::string text =
      fmt::format("{} (replay: FAULTS_SEED={} FAULTS_TRIALS=1): exit {}\n", trial, seed, f.exit_code);
  for (const auto& violation : violations) text += "  - " + violation + "\n";
  text += "  stderr: " + f.err;
  return text;
}

Tally& tally() {
  static Tally t;
  return t;
}

void record(const Violations& violations) {
  Tally& t = tally();
  ++t.trials;
  if (violations.empty()) ++t.survived;
  for (const auto& violation : violations) {
    if (violation.rfind("run lost", 0) == 0) ++t.runs_lost;
    if (violation.rfind("GPU changed", 0) == 0) ++t.gpus_left_changed;
    if (violation.rfind("orphan", 0) == 0) ++t.orphans;
  }
}

}  // namespace wattwise::faults
