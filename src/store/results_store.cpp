#include "store/results_store.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/version.hpp"
#include "store/sqlite_statement.hpp"

namespace wattwise::store {
namespace {

// PRAGMA application_id: "WATT" in ASCII, so `file` and our own checks can tell our databases apart.
constexpr std::int64_t kApplicationId = 0x57415454;

constexpr const char* kSchema = R"sql(
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE plan (id INTEGER PRIMARY KEY CHECK (id = 1), spec_json TEXT NOT NULL);
CREATE TABLE gpus (
  gpu_index INTEGER PRIMARY KEY, uuid TEXT NOT NULL, name TEXT NOT NULL,
  min_limit_w REAL, max_limit_w REAL, default_limit_w REAL);
CREATE TABLE runs (
  id INTEGER PRIMARY KEY, plan_index INTEGER NOT NULL UNIQUE, settings_json TEXT NOT NULL,
  repeat INTEGER NOT NULL, warmup INTEGER NOT NULL, started_at TEXT NOT NULL, ended_at TEXT NOT NULL,
  exit_status INTEGER, time_s REAL, energy_j REAL, method TEXT NOT NULL, error TEXT NOT NULL,
  work REAL, label TEXT NOT NULL);
CREATE TABLE run_settings (
  run_id INTEGER NOT NULL REFERENCES runs(id), position INTEGER NOT NULL, knob TEXT NOT NULL,
  value TEXT NOT NULL, PRIMARY KEY (run_id, knob));
CREATE TABLE run_gpu_energy (
  run_id INTEGER NOT NULL REFERENCES runs(id), gpu_index INTEGER NOT NULL, energy_j REAL, avg_power_w REAL,
  peak_power_w REAL, method TEXT NOT NULL, enforced_power_limit_w REAL, sm_clock_mhz INTEGER,
  mem_clock_mhz INTEGER, PRIMARY KEY (run_id, gpu_index));
CREATE TABLE run_phases (
  run_id INTEGER NOT NULL REFERENCES runs(id), gpu_index INTEGER, name TEXT NOT NULL, count INTEGER NOT NULL,
  time_s REAL NOT NULL, energy_j REAL, samples INTEGER NOT NULL, method TEXT NOT NULL);
CREATE TABLE traces (
  run_id INTEGER NOT NULL REFERENCES runs(id), gpu_index INTEGER NOT NULL, csv TEXT NOT NULL,
  PRIMARY KEY (run_id, gpu_index));
)sql";

// Added in version 2 (also by the upgrade of a version 1 file on resume).
constexpr const char* kEarlierAttemptsTable = R"sql(
CREATE TABLE IF NOT EXISTS earlier_attempts (
  plan_index INTEGER NOT NULL, settings_json TEXT NOT NULL, started_at TEXT NOT NULL, ended_at TEXT NOT NULL,
  exit_status INTEGER, time_s REAL, energy_j REAL, error TEXT NOT NULL, replaced_at TEXT NOT NULL);
)sql";

// Schema version 3, GPU detection: one row per GPU of the node per run. Kept in this one block (created with
// the other tables, and added to a version 2 file on resume) so that other version 3 additions stay apart.
constexpr const char* kGpuUsageTableV3 = R"sql(
CREATE TABLE IF NOT EXISTS run_gpu_usage (
  run_id INTEGER NOT NULL REFERENCES runs(id), gpu_index INTEGER NOT NULL, uuid TEXT NOT NULL,
  expected INTEGER NOT NULL, measured INTEGER NOT NULL, job_seen INTEGER, pids_json TEXT NOT NULL,
  PRIMARY KEY (run_id, gpu_index));
)sql";

// The writer lock: flock on `<db>.lock`, beside the database rather than on it, because SQLite's own
// (fcntl) locks on the database must not meet ours (over NFS flock is emulated with fcntl). The file is
// kept: removing it would let a third writer lock a new file while a second holds the old one.
int take_writer_lock(const std::filesystem::path& db_path) {
  const std::string lock_path = db_path.string() + ".lock";
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw environment_error(
        fmt::format("cannot create the writer lock {} ({}): pass --db in a writable "
                    "directory",
                    lock_path, std::strerror(errno)));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error_number = errno;
    char holder[32] = {};
    const ssize_t n = ::pread(fd, holder, sizeof holder - 1, 0);
    ::close(fd);
    if (error_number == EWOULDBLOCK) {
      std::string pid = n > 0 ? std::string(holder, static_cast<std::size_t>(n)) : std::string("?");
      pid.erase(pid.find_last_not_of(" \n") + 1);
      throw environment_error(
          fmt::format("results database {} is being written by another wattwise (PID {}): wait for it to "
                      "end, or give another --db",
                      db_path.string(), pid.empty() ? "?" : pid));
    }
    throw environment_error(
        fmt::format("cannot lock {} ({}): check the directory", lock_path, std::strerror(error_number)));
  }
  const std::string pid = fmt::format("{}\n", static_cast<long>(::getpid()));
  if (::ftruncate(fd, 0) != 0 ||
      ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    // The PID is only for the message of the writer refused; the lock itself holds.
  }
  return fd;
}

// A writer's connection: WAL, so that readers (report, analyze, a sqlite3 shell) never block the commit of
// a run and the commit never blocks them; FULL sync, so that a committed run survives a power loss.
// A database file and SQLite's files beside it.
void remove_database_files(const std::filesystem::path& path) {
  std::error_code ignored;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    std::filesystem::remove(std::filesystem::path(path.string() + suffix), ignored);
}

// The rename of a new database into place survives a power loss only once its directory is on disk.
void sync_directory(const std::filesystem::path& path) {
  const auto dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

void make_writer(sqlite3* db, const std::string& path) {
  exec_sql(db, path, "PRAGMA journal_mode = WAL");
  exec_sql(db, path, "PRAGMA synchronous = FULL");
}

Error not_ours(const std::filesystem::path& path, const std::string& why) {
  return data_error(
      fmt::format("{} is not a wattwise results database ({}): give the --db of a sweep, or a new "
                  "file name",
                  path.string(), why));
}

bool has_sqlite_header(std::ifstream& in) {
  char header[16] = {};
  in.read(header, sizeof header);
  return in.gcount() == sizeof header && std::string(header, sizeof header) == std::string("SQLite format 3\0", 16);
}

// Reads the header ourselves before SQLite sees the file, so a foreign file is never opened for writing.
void check_sqlite_header(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw environment_error(fmt::format("cannot read {}: check the path and its permissions", path.string()));
  if (!has_sqlite_header(in)) throw not_ours(path, "not an SQLite file");
}

bool named_like_a_database(const std::filesystem::path& path) {
  const std::string extension = path.extension().string();
  return extension == ".db" || extension == ".sqlite" || extension == ".sqlite3";
}

sqlite3* open_database(const std::filesystem::path& path, int flags) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    std::string message = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    throw environment_error(fmt::format("cannot open results database {}: {}", path.string(), message));
  }
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, static_cast<int>(kDefaultBusyTimeout.count()));
  return db;
}

std::string read_meta(sqlite3* db, const std::string& path, const std::string& key) {
  Statement query(db, path, "SELECT value FROM meta WHERE key = ?");
  query.bind(1, key);
  return query.step() ? query.text(0) : std::string();
}

// Throws (and closes db) unless this is a wattwise database of our schema version.
void check_ours(sqlite3* db, const std::filesystem::path& path) {
  try {
    Statement app_id(db, path, "PRAGMA application_id");
    if (!app_id.step() || app_id.integer(0) != kApplicationId)
      throw not_ours(path, "no wattwise application id");
    const std::string version = read_meta(db, path, "schema_version");
    int number = 0;
    try {
      number = std::stoi(version);
    } catch (const std::exception&) {
    }
    if (number < kOldestReadableSchemaVersion || number > kResultsSchemaVersion) {
      throw data_error(
          fmt::format("{} has results schema version {}, this wattwise reads version {}: use the "
                      "wattwise version that wrote it",
                      path.string(), version.empty() ? "?" : version, kResultsSchemaVersion));
    }
  } catch (const Error& e) {
    sqlite3_close(db);
    if (e.kind() == ErrorKind::kData &&
        std::string(e.what()).find("is not a wattwise") == std::string::npos &&
        std::string(e.what()).find("schema version") == std::string::npos) {
      throw not_ours(path, e.what());  // e.g. "file is not a database", "no such table: meta"
    }
    throw;
  }
}

sqlite3* open_existing(const std::filesystem::path& path, int flags) {
  if (!std::filesystem::exists(path)) {
    throw usage_error(fmt::format("results database {} does not exist: check the path", path.string()));
  }
  check_sqlite_header(path);
  sqlite3* db = open_database(path, flags);
  check_ours(db, path);
  return db;
}

std::string host_name() {
  char host[256] = {};
  return ::gethostname(host, sizeof host - 1) == 0 ? std::string(host) : std::string("unknown");
}

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

ResultsStore ResultsStore::writer(const std::filesystem::path& path, int lock_fd,
                                  sqlite3* (*open)(const std::filesystem::path&, int), int flags) {
  sqlite3* db = nullptr;
  try {
    db = open(path, flags);
  } catch (...) {
    ::close(lock_fd);
    throw;
  }
  ResultsStore store(db, path);
  store.writer_lock_fd_ = lock_fd;
  return store;
}

ResultsStore ResultsStore::create(const std::filesystem::path& path, const StoreMeta& meta,
                                  const nlohmann::json& plan, const std::vector<StoredGpu>& gpus) {
  if (std::filesystem::exists(path)) {
    throw usage_error(
        fmt::format("results database {} already exists: add --resume to continue its plan, or give "
                    "another --db",
                    path.string()));
  }
  const int lock_fd = take_writer_lock(path);
  if (std::filesystem::exists(path)) {  // created meanwhile by a writer that has finished
    ::close(lock_fd);
    throw usage_error(
        fmt::format("results database {} already exists: add --resume to continue its plan, or give "
                    "another --db",
                    path.string()));
  }
  // Built under a temporary name and renamed into place once complete: a crash (SIGKILL included) or a full
  // disk during creation leaves no database, never one without its tables. The writer lock makes the name
  // ours; a leftover is a creation that was killed.
  const std::string p = path.string();
  const std::filesystem::path building = p + ".new";
  remove_database_files(building);
  sqlite3* db = nullptr;
  try {
    db = open_database(building, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    exec_sql(db, p, "PRAGMA synchronous = FULL");
    exec_sql(db, p, "BEGIN");
    exec_sql(db, p, fmt::format("PRAGMA application_id = {}", kApplicationId).c_str());
    exec_sql(db, p, kSchema);
    exec_sql(db, p, kEarlierAttemptsTable);
    exec_sql(db, p, kGpuUsageTableV3);
    create_node_energy_table(db, p);
    create_tune_tables(db, p);
    create_cluster_node_table(db, p);
    const nlohmann::json argv = meta.command_argv;
    const std::pair<const char*, std::string> entries[] = {
        {"application", "wattwise"},
        {"tool_version", kVersion},
        {"schema_version", std::to_string(kResultsSchemaVersion)},
        {"created_at", utc_now_iso8601()},
        {"host", meta.host.empty() ? host_name() : meta.host},
        {"command", meta.command},
        {"command_json", json_text(argv)},
        {"sweep_json", meta.sweep_options.is_null() ? std::string("{}") : json_text(meta.sweep_options)},
        {"measurement_method", meta.measurement_method},
    };
    for (const auto& [key, value] : entries) {
      Statement insert(db, p, "INSERT INTO meta (key, value) VALUES (?, ?)");
      insert.bind(1, std::string(key)).bind(2, value).run();
    }
    Statement insert_plan(db, p, "INSERT INTO plan (id, spec_json) VALUES (1, ?)");
    insert_plan.bind(1, json_text(plan)).run();
    for (const auto& gpu : gpus) {
      Statement insert(db, p,
                       "INSERT INTO gpus (gpu_index, uuid, name, min_limit_w, max_limit_w, default_limit_w) "
                       "VALUES (?, ?, ?, ?, ?, ?)");
      insert.bind(1, static_cast<std::int64_t>(gpu.index))
          .bind(2, gpu.uuid)
          .bind(3, gpu.name)
          .bind(4, gpu.min_limit_w)
          .bind(5, gpu.max_limit_w)
          .bind(6, gpu.default_limit_w)
          .run();
    }
    exec_sql(db, p, "COMMIT");
    sqlite3_close(db);
    db = nullptr;
    std::error_code error;
    std::filesystem::rename(building, path, error);
    if (error)
      throw environment_error(
          fmt::format("cannot create results database {}: {}: check the directory", p, error.message()));
    sync_directory(path);
  } catch (...) {
    if (db != nullptr) sqlite3_close(db);
    remove_database_files(building);
    ::close(lock_fd);
    throw;
  }
  ResultsStore store = writer(path, lock_fd, open_existing, SQLITE_OPEN_READWRITE);
  try {
    make_writer(store.db_, p);  // WAL needs room for its own files: a full disk can still fail here
  } catch (...) {
    remove_database_files(path);  // it holds no run yet; the store closes as the error leaves
    throw;
  }
  return store;
}

ResultsStore ResultsStore::open_for_resume(const std::filesystem::path& path, const nlohmann::json& plan) {
  if (!std::filesystem::exists(path)) {
    throw usage_error(fmt::format("results database {} does not exist: check the path", path.string()));
  }
  // The lock first: a database being created by another writer may not even have its header yet.
  const int lock_fd = take_writer_lock(path);
  ResultsStore store = writer(path, lock_fd, open_existing, SQLITE_OPEN_READWRITE);
  const std::string p = path.string();
  make_writer(store.db_, p);
  if (store.schema_version() < kResultsSchemaVersion) {
    // Versions 1 to 5 -> 6: only additions (tables, meta entries), so the upgrade is a few statements.
    exec_sql(store.db_, p, "BEGIN IMMEDIATE");
    try {
      exec_sql(store.db_, p, kEarlierAttemptsTable);
      exec_sql(store.db_, p, kGpuUsageTableV3);
      create_node_energy_table(store.db_, p);
      create_tune_tables(store.db_, p);
      create_cluster_node_table(store.db_, p);
      Statement version(store.db_, p, "UPDATE meta SET value = ? WHERE key = 'schema_version'");
      version.bind(1, std::to_string(kResultsSchemaVersion)).run();
      exec_sql(store.db_, p, "COMMIT");
    } catch (...) {
      sqlite3_exec(store.db_, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  }
  const nlohmann::json stored = store.plan();
  if (stored != plan) {
    std::vector<std::string> differences;
    for (const auto& [key, value] : stored.items()) {
      if (!plan.contains(key) || plan.at(key) != value) differences.push_back(key);
    }
    for (const auto& [key, value] : plan.items()) {
      if (!stored.contains(key)) differences.push_back(key);
    }
    throw usage_error(
        fmt::format("cannot resume {}: it was made for a different plan (differs in {}): give the same "
                    "knobs, order, seed and repeats as before, or a new --db",
                    path.string(), fmt::join(differences, ", ")));
  }
  return store;
}

ResultsStore ResultsStore::open_read_only(const std::filesystem::path& path) {
  return ResultsStore(open_existing(path, SQLITE_OPEN_READONLY), path);
}

ResultsStore::ResultsStore(ResultsStore&& other) noexcept
    : db_(other.db_), path_(std::move(other.path_)), writer_lock_fd_(other.writer_lock_fd_) {
  other.db_ = nullptr;
  other.writer_lock_fd_ = -1;
}

ResultsStore& ResultsStore::operator=(ResultsStore&& other) noexcept {
  if (this != &other) {
    close();
    db_ = other.db_;
    path_ = std::move(other.path_);
    writer_lock_fd_ = other.writer_lock_fd_;
    other.db_ = nullptr;
    other.writer_lock_fd_ = -1;
  }
  return *this;
}

ResultsStore::~ResultsStore() {
  close();
}

void ResultsStore::close() {
  if (db_ != nullptr && writer_lock_fd_ >= 0) {
    // Back to one self-contained file (no -wal, -shm) that any reader can open, also in a read-only
    // directory. Only possible when no other connection is open; otherwise the WAL simply stays.
    sqlite3_busy_timeout(db_, 0);
    sqlite3_exec(db_, "PRAGMA journal_mode = DELETE", nullptr, nullptr, nullptr);
  }
  sqlite3_close(db_);
  db_ = nullptr;
  if (writer_lock_fd_ >= 0) ::close(writer_lock_fd_);  // releases the flock
  writer_lock_fd_ = -1;
}

void ResultsStore::set_busy_timeout(std::chrono::milliseconds timeout) {
  sqlite3_busy_timeout(db_, static_cast<int>(timeout.count()));
}

int ResultsStore::schema_version() const {
  try {
    return std::stoi(meta("schema_version"));
  } catch (const std::exception&) {
    return 0;
  }
}

namespace {

std::vector<std::string> uuids_of(const std::vector<StoredGpu>& gpus) {
  std::vector<std::string> uuids;
  for (const auto& gpu : gpus) uuids.push_back(gpu.uuid);
  return uuids;
}

}  // namespace

void ResultsStore::check_same_job(const StoreMeta& meta, const std::vector<StoredGpu>& gpus,
                                  bool allow_different) {
  const std::string p = path_.string();
  std::vector<std::string> differences;
  const std::string stored_argv_text = this->meta("command_json");
  nlohmann::json stored_argv = nlohmann::json::array();
  try {
    if (!stored_argv_text.empty()) stored_argv = nlohmann::json::parse(stored_argv_text);
  } catch (const std::exception&) {
  }
  // Files of version 1 kept only the command as text.
  const bool same_command = !stored_argv.empty() && !meta.command_argv.empty()
                                ? stored_argv == nlohmann::json(meta.command_argv)
                                : this->meta("command") == meta.command;
  if (!same_command)
    differences.push_back(fmt::format("the command was '{}', now '{}'", this->meta("command"), meta.command));
  const auto stored_uuids = uuids_of(this->gpus());
  const auto uuids = uuids_of(gpus);
  if (!gpus.empty() && stored_uuids != uuids) {
    differences.push_back(
        fmt::format("the GPUs were {}, now {}", fmt::join(stored_uuids, ","), fmt::join(uuids, ",")));
  }
  if (differences.empty()) return;
  if (!allow_different) {
    throw usage_error(fmt::format(
        "cannot resume {}: {}: give the same command and GPUs (`wattwise sweep --resume --db {}` alone "
        "reuses them), or add --allow-mixed-results to store the new runs beside the old ones knowingly",
        p, fmt::join(differences, "; "), p));
  }
  nlohmann::json mixed = nlohmann::json::array();
  try {
    const std::string text = this->meta("mixed_results");
    if (!text.empty()) mixed = nlohmann::json::parse(text);
  } catch (const std::exception&) {
  }
  mixed.push_back({{"at", utc_now_iso8601()},
                   {"command", meta.command},
                   {"command_json", meta.command_argv},
                   {"gpus", uuids}});
  Statement s(db_, p, "INSERT OR REPLACE INTO meta (key, value) VALUES ('mixed_results', ?)");
  s.bind(1, json_text(mixed)).run();
}

void ResultsStore::add_tune_trace(const TuneTrace& trace) {
  const std::string p = path_.string();
  exec_sql(db_, p, "BEGIN IMMEDIATE");
  try {
    insert_tune_trace(db_, p, trace);
    exec_sql(db_, p, "COMMIT");
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

std::optional<TuneTrace> ResultsStore::tune_trace() const {
  return read_tune_trace(db_, path_.string());
}

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
  exec_sql(db_, p, "BEGIN IMMEDIATE");
  try {
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
                                "run_phase_node_energy", "run_gpu_usage", "traces", "run_cluster_nodes"}) {
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
      Statement s(
          db_, p,
          "INSERT INTO run_gpu_energy (run_id, gpu_index, energy_j, avg_power_w, peak_power_w, method, "
          "enforced_power_limit_w, sm_clock_mhz, mem_clock_mhz) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
      s.bind(1, run_id).bind(2, static_cast<std::int64_t>(gpu.gpu_index)).bind(3, gpu.energy_j);
      s.bind(4, gpu.avg_power_w).bind(5, gpu.peak_power_w).bind(6, gpu.method);
      s.bind(7, gpu.enforced_power_limit_w).bind(8, gpu.sm_clock_mhz).bind(9, gpu.mem_clock_mhz).run();
    }
    for (const auto& phase : run.phases) {
      Statement s(
          db_, p,
          "INSERT INTO run_phases (run_id, gpu_index, name, count, time_s, energy_j, samples, method) "
          "VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
      s.bind(1, run_id)
          .bind(2, phase.gpu_index)
          .bind(3, phase.name)
          .bind(4, static_cast<std::int64_t>(phase.count));
      s.bind(5, phase.time_s).bind(6, phase.energy_j).bind(7, static_cast<std::int64_t>(phase.samples));
      s.bind(8, phase.method).run();
    }
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
    for (const auto& trace : run.traces) {
      Statement s(db_, p, "INSERT INTO traces (run_id, gpu_index, csv) VALUES (?, ?, ?)");
      s.bind(1, run_id).bind(2, static_cast<std::int64_t>(trace.gpu_index)).bind(3, trace.csv).run();
    }
    exec_sql(db_, p, "COMMIT");
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
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
  std::vector<std::int64_t> ids;
  Statement query(
      db_, p,
      "SELECT id, plan_index, repeat, warmup, started_at, ended_at, exit_status, time_s, energy_j, "
      "method, error, work, label FROM runs ORDER BY plan_index");
  while (query.step()) {
    RunRecord run;
    ids.push_back(query.integer(0));
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
  for (std::size_t i = 0; i < runs.size(); ++i) {
    Statement settings(db_, p, "SELECT knob, value FROM run_settings WHERE run_id = ? ORDER BY position");
    settings.bind(1, ids[i]);
    while (settings.step()) runs[i].settings.push_back({settings.text(0), settings.text(1)});
    Statement gpus(db_, p,
                   "SELECT gpu_index, energy_j, avg_power_w, peak_power_w, method, enforced_power_limit_w, "
                   "sm_clock_mhz, mem_clock_mhz FROM run_gpu_energy WHERE run_id = ? ORDER BY gpu_index");
    gpus.bind(1, ids[i]);
    while (gpus.step()) {
      GpuRunEnergy gpu;
      gpu.gpu_index = static_cast<unsigned>(gpus.integer(0));
      gpu.energy_j = gpus.optional_real(1);
      gpu.avg_power_w = gpus.optional_real(2);
      gpu.peak_power_w = gpus.optional_real(3);
      gpu.method = gpus.text(4);
      gpu.enforced_power_limit_w = gpus.optional_real(5);
      if (auto mhz = gpus.optional_integer(6)) gpu.sm_clock_mhz = static_cast<unsigned>(*mhz);
      if (auto mhz = gpus.optional_integer(7)) gpu.mem_clock_mhz = static_cast<unsigned>(*mhz);
      runs[i].gpus.push_back(gpu);
    }
    Statement phases(db_, p,
                     "SELECT gpu_index, name, count, time_s, energy_j, samples, method FROM run_phases "
                     "WHERE run_id = ? ORDER BY rowid");
    phases.bind(1, ids[i]);
    while (phases.step()) {
      PhaseResult phase;
      if (auto gpu = phases.optional_integer(0)) phase.gpu_index = static_cast<unsigned>(*gpu);
      phase.name = phases.text(1);
      phase.count = static_cast<unsigned>(phases.integer(2));
      phase.time_s = phases.real(3);
      phase.energy_j = phases.optional_real(4);
      phase.samples = static_cast<std::size_t>(phases.integer(5));
      phase.method = phases.text(6);
      runs[i].phases.push_back(phase);
    }
    runs[i].node = read_node_energy(db_, p, ids[i]);
    runs[i].cluster_nodes = read_cluster_nodes(db_, p, ids[i]);
  }
  return runs;
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
  out << "time_s,energy_j,repeat,work,label\n";
  for (const auto& run : runs()) {
    // Warm-ups are not analysed, and a failed run has no trustworthy time or energy.
    if (run.warmup || !run.error.empty() || !run.time_s || !run.energy_j) continue;
    for (const auto& knob : knobs) {
      auto it =
          std::find_if(run.settings.begin(), run.settings.end(), [&](auto& s) { return s.knob == knob; });
      out << (it == run.settings.end() ? std::string() : csv_field(it->value)) << ',';
    }
    out << fmt::format("{},{},{},{},{}\n", *run.time_s, *run.energy_j, run.repeat, optional_number(run.work),
                       csv_field(run.label));
  }
}

bool is_database_input(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (in && has_sqlite_header(in)) return true;
  // A damaged database read as a CSV gave a parse error about its bytes, or worse, a table.
  if (in && named_like_a_database(path)) throw not_ours(path, "no SQLite header: damaged or truncated?");
  return false;
}

}  // namespace wattwise::store
