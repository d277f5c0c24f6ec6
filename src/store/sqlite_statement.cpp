#include "store/sqlite_statement.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace wattwise::store {
namespace {

Error sqlite_failure(sqlite3* db, const std::string& path, const char* what) {
  return data_error(fmt::format("results database {}: {} failed: {}", path, what, sqlite3_errmsg(db)));
}

}  // namespace

Statement::Statement(sqlite3* db, const std::string& path, const char* sql) : db_(db), path_(path) {
  if (sqlite3_prepare_v2(db, sql, -1, &statement_, nullptr) != SQLITE_OK)
    throw sqlite_failure(db, path, "prepare");
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
Statement& Statement::bind_null(int position) {
  sqlite3_bind_null(statement_, position);
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(statement_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  throw sqlite_failure(db_, path_, "query");
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
std::optional<double> Statement::optional_real(int column) const {
  return is_null(column) ? std::nullopt : std::optional<double>(real(column));
}
std::optional<std::int64_t> Statement::optional_integer(int column) const {
  return is_null(column) ? std::nullopt : std::optional<std::int64_t>(integer(column));
}

void exec_sql(sqlite3* db, const std::string& path, const char* sql) {
  char* message = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &message) != SQLITE_OK) {
    std::string text = message ? message : "unknown error";
    sqlite3_free(message);
    throw data_error(fmt::format("results database {}: {}", path, text));
  }
}

}  // namespace wattwise::store
