#include "store/sqlite_statement.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace wattwise::store {

bool SqliteError::busy() const {
  const int primary = code_ & 0xff;
  return primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
}

SqliteError sqlite_error(sqlite3* db, const std::string& path, const char* what, int code) {
  const std::string message = db ? sqlite3_errmsg(db) : sqlite3_errstr(code);
  switch (code & 0xff) {
    case SQLITE_FULL:
      return SqliteError(code, ErrorKind::kEnvironment,
                         fmt::format("disk full writing results database {} ({}): free space and continue "
                                     "with --resume",
                                     path, message));
    case SQLITE_IOERR:
      return SqliteError(code, ErrorKind::kEnvironment,
                         fmt::format("cannot write results database {} ({} failed: {}): check the disk and "
                                     "free space, then continue with --resume",
                                     path, what, message));
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return SqliteError(code, ErrorKind::kEnvironment,
                         fmt::format("results database {} is locked by another program ({}): close it and "
                                     "continue with --resume",
                                     path, message));
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
      return SqliteError(
          code, ErrorKind::kEnvironment,
          fmt::format("cannot write results database {} ({}): check its permissions", path, message));
    default:
      return SqliteError(code, ErrorKind::kData,
                         fmt::format("results database {}: {} failed: {}", path, what, message));
  }
}

namespace {

SqliteError sqlite_failure(sqlite3* db, const std::string& path, const char* what, int code) {
  return sqlite_error(db, path, what, code);
}

}  // namespace

Statement::Statement(sqlite3* db, const std::string& path, const char* sql) : db_(db), path_(path) {
  if (const int rc = sqlite3_prepare_v2(db, sql, -1, &statement_, nullptr); rc != SQLITE_OK)
    throw sqlite_failure(db, path, "prepare", sqlite3_extended_errcode(db));
}

Statement::~Statement() {
  sqlite3_finalize(statement_);
}

Statement& Statement::bind(int position, std::int64_t value) {
  sqlite3_bind_int64(statement_, position, value);
  return *this;
}
Statement& Statement::bind(int position, double value) {
  sqlite3_bind_double(statement_, position, value);
  return *this;
}
Statement& Statement::bind(int position, const std::string& value) {
  sqlite3_bind_text(statement_, position, value.c_str(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
  return *this;
}
Statement& Statement::bind_blob(int position, const std::string& bytes) {
  sqlite3_bind_blob(statement_, position, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
  return *this;
}
Statement& Statement::bind_null(int position) {
  sqlite3_bind_null(statement_, position);
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(statement_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  throw sqlite_failure(db_, path_, "query", rc);
}

void Statement::run() {
  while (step()) {
  }
}

bool Statement::is_null(int column) const {
  return sqlite3_column_type(statement_, column) == SQLITE_NULL;
}
std::int64_t Statement::integer(int column) const {
  return sqlite3_column_int64(statement_, column);
}
double Statement::real(int column) const {
  return sqlite3_column_double(statement_, column);
}
std::string Statement::text(int column) const {
  const auto* text = sqlite3_column_text(statement_, column);
  return text == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(text));
}
std::string Statement::blob(int column) const {
  const void* bytes = sqlite3_column_blob(statement_, column);
  const int size = sqlite3_column_bytes(statement_, column);
  return bytes == nullptr ? std::string()
                          : std::string(static_cast<const char*>(bytes), static_cast<std::size_t>(size));
}
std::optional<double> Statement::optional_real(int column) const {
  return is_null(column) ? std::nullopt : std::optional<double>(real(column));
}
std::optional<std::int64_t> Statement::optional_integer(int column) const {
  return is_null(column) ? std::nullopt : std::optional<std::int64_t>(integer(column));
}

void exec_sql(sqlite3* db, const std::string& path, const char* sql) {
  if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK)
    throw sqlite_failure(db, path, "statement", sqlite3_extended_errcode(db));
}

bool has_column(sqlite3* db, const std::string& path, const std::string& table, const std::string& column) {
  Statement query(db, path, "SELECT 1 FROM pragma_table_info(?) WHERE name = ?");
  query.bind(1, table).bind(2, column);
  return query.step();
}

Transaction::Transaction(sqlite3* db, std::string path, const char* begin) : db_(db), path_(std::move(path)) {
  exec_sql(db_, path_, begin);
}

Transaction::~Transaction() {
  if (open_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  exec_sql(db_, path_, "COMMIT");
  open_ = false;
}

}  // namespace wattwise::store
