#include "store/database.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/numbers.hpp"
#include "store/results_store.hpp"
#include "store/schema.hpp"
#include "store/sqlite_statement.hpp"

namespace wattwise::store {
namespace {

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
  require_regular_file(path, "a sweep database");  // a FIFO would hang the read, /dev/zero fill memory
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw environment_error(fmt::format("cannot read {}: check the path and its permissions", path.string()));
  if (!has_sqlite_header(in)) throw not_ours(path, "not an SQLite file");
}

bool named_like_a_database(const std::filesystem::path& path) {
  const std::string extension = path.extension().string();
  return extension == ".db" || extension == ".sqlite" || extension == ".sqlite3";
}

// Throws (and closes db) unless this is a wattwise database of our schema version.
void check_ours(sqlite3* db, const std::filesystem::path& path) {
  try {
    Statement app_id(db, path, "PRAGMA application_id");
    if (!app_id.step() || app_id.integer(0) != kApplicationId)
      throw not_ours(path, "no wattwise application id");
    const std::string version = read_meta(db, path, "schema_version");
    const int number = parse_integer<int>(version).value_or(0);
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

}  // namespace

// Beside the database rather than on it, because SQLite's own
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

void remove_database_files(const std::filesystem::path& path) {
  std::error_code ignored;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    std::filesystem::remove(std::filesystem::path(path.string() + suffix), ignored);
}

void make_writer(sqlite3* db, const std::string& path) {
  exec_sql(db, path, "PRAGMA journal_mode = WAL");
  exec_sql(db, path, "PRAGMA synchronous = FULL");
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

bool is_database_input(const std::filesystem::path& path) {
  require_regular_file(path, "a sweep database or a runs CSV");
  std::ifstream in(path, std::ios::binary);
  if (in && has_sqlite_header(in)) return true;
  // A damaged database read as a CSV gave a parse error about its bytes, or worse, a table.
  if (in && named_like_a_database(path)) throw not_ours(path, "no SQLite header: damaged or truncated?");
  return false;
}

}  // namespace wattwise::store
