#include "store/results_store.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>

#include "core/atomic_file.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/numbers.hpp"
#include "core/version.hpp"
#include "store/database.hpp"
#include "store/schema.hpp"
#include "store/sqlite_statement.hpp"

namespace wattwise::store {

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
    Transaction transaction(db, p, "BEGIN");
    create_schema(db, p);
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
    transaction.commit();
    sqlite3_close(db);
    db = nullptr;
    std::error_code error;
    std::filesystem::rename(building, path, error);
    if (error)
      throw environment_error(
          fmt::format("cannot create results database {}: {}: check the directory", p, error.message()));
    sync_directory_of(path);  // the rename survives a power loss only once the directory is on disk
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
  if (store.schema_version() < kResultsSchemaVersion) upgrade_schema(store.db_, p);
  create_indexes(store.db_, p);
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
  return parse_integer<int>(meta("schema_version")).value_or(0);
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

void ResultsStore::record_sweep_options(const nlohmann::json& sweep_options) {
  if (sweep_options.is_null()) return;  // a caller that keeps no options (tests, the Slurm steps) leaves them
  Statement s(db_, path_.string(), "INSERT OR REPLACE INTO meta (key, value) VALUES ('sweep_json', ?)");
  s.bind(1, json_text(sweep_options)).run();
}

void ResultsStore::record_settings_changed_by(const std::string& path) {
  const std::string p = path_.string();
  std::string value = meta("settings_changed_by");
  std::vector<std::string> paths;
  for (std::size_t start = 0; start < value.size();) {
    const auto comma = std::min(value.find(',', start), value.size());
    paths.push_back(value.substr(start, comma - start));
    start = comma + 1;
  }
  if (std::find(paths.begin(), paths.end(), path) != paths.end()) return;
  value += (value.empty() ? "" : ",") + path;
  Statement s(db_, p, "INSERT OR REPLACE INTO meta (key, value) VALUES ('settings_changed_by', ?)");
  s.bind(1, value).run();
}

}  // namespace wattwise::store
