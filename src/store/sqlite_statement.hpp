#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>

#include "core/error.hpp"

namespace wattwise::store {

// A failed SQLite call. The kind follows the cause: a full disk, an I/O error, a database locked by another
// program or not writable are the machine's (environment, exit 3: free space or close the other program and
// continue with --resume); anything else is the file's (data, exit 4). `code()` is SQLite's extended code.
class SqliteError : public Error {
 public:
  SqliteError(int code, ErrorKind kind, const std::string& message) : Error(kind, message), code_(code) {}
  int code() const { return code_; }
  // Another connection holds a lock the call needed (SQLITE_BUSY or SQLITE_LOCKED) past the busy timeout.
  bool busy() const;

 private:
  int code_;
};

// The error for SQLite result `code` of `what` on database `path`.
SqliteError sqlite_error(sqlite3* db, const std::string& path, const char* what, int code);

// A prepared SQLite statement with typed binds that understand std::optional (absent -> NULL). Failures
// throw SqliteError naming the database file and SQLite's message. Internal to the results store.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& path, const char* sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int position, std::int64_t value);
  Statement& bind(int position, double value);
  Statement& bind(int position, const std::string& value);
  template <typename T>
  Statement& bind(int position, const std::optional<T>& value) {
    if (!value) return bind_null(position);
    if constexpr (std::is_floating_point_v<T>)
      return bind(position, static_cast<double>(*value));
    else
      return bind(position, static_cast<std::int64_t>(*value));
  }
  Statement& bind_null(int position);
  Statement& bind_blob(int position, const std::string& bytes);  // any bytes, NUL included

  bool step();  // true while there is a row
  void run();   // a statement that returns no rows

  bool is_null(int column) const;
  std::int64_t integer(int column) const;
  double real(int column) const;
  std::string text(int column) const;
  std::string blob(int column) const;  // every byte of a BLOB (or TEXT) column, NUL included
  std::optional<double> optional_real(int column) const;
  std::optional<std::int64_t> optional_integer(int column) const;

 private:
  sqlite3* db_;
  std::string path_;
  sqlite3_stmt* statement_ = nullptr;
};

// Runs SQL without results (schema, transactions).
void exec_sql(sqlite3* db, const std::string& path, const char* sql);

// Whether `table` has a column named `column`: a column added by a later schema version is missing from an
// older file read without being upgraded.
bool has_column(sqlite3* db, const std::string& path, const std::string& table, const std::string& column);

// One transaction: begun by the constructor ("BEGIN IMMEDIATE" takes the write lock at once, so a busy
// database fails here rather than at the commit), committed by commit(), rolled back by the destructor
// when an exception leaves before that.
class Transaction {
 public:
  Transaction(sqlite3* db, std::string path, const char* begin = "BEGIN IMMEDIATE");
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  sqlite3* db_;
  std::string path_;
  bool open_ = true;
};

}  // namespace wattwise::store
