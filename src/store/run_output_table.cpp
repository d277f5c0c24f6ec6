#include "store/run_output_table.hpp"

#include <sqlite3.h>

#include "store/sqlite_statement.hpp"

namespace wattwise::store {

namespace {

constexpr const char* kRunOutputTable = R"sql(
CREATE TABLE IF NOT EXISTS run_output (
  run_id INTEGER NOT NULL REFERENCES runs(id), stream TEXT NOT NULL, tail BLOB NOT NULL,
  bytes INTEGER NOT NULL, truncated INTEGER NOT NULL, PRIMARY KEY (run_id, stream));
)sql";

bool has_run_output_table(sqlite3* db, const std::string& path) {
  Statement query(db, path, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'run_output'");
  return query.step();
}

}  // namespace

void create_run_output_table(sqlite3* db, const std::string& path) {
  exec_sql(db, path, kRunOutputTable);
}

void insert_run_output(sqlite3* db, const std::string& path, std::int64_t run_id,
                       const std::vector<RunOutput>& output) {
  for (const auto& o : output) {
    Statement s(db, path,
                "INSERT INTO run_output (run_id, stream, tail, bytes, truncated) VALUES (?, ?, ?, ?, ?)");
    s.bind(1, run_id).bind(2, o.stream).bind_blob(3, o.tail);
    s.bind(4, static_cast<std::int64_t>(o.bytes)).bind(5, std::int64_t{o.truncated}).run();
  }
}

std::vector<RunOutput> read_run_output(sqlite3* db, const std::string& path, std::int64_t plan_index) {
  std::vector<RunOutput> output;
  if (!has_run_output_table(db, path)) return output;
  Statement query(db, path,
                  "SELECT o.stream, o.tail, o.bytes, o.truncated FROM run_output o JOIN runs r ON r.id = "
                  "o.run_id WHERE r.plan_index = ? ORDER BY o.stream DESC");
  query.bind(1, plan_index);
  while (query.step())
    output.push_back({query.text(0), query.blob(1), static_cast<std::uint64_t>(query.integer(2)),
                      query.integer(3) != 0});
  return output;
}

}  // namespace wattwise::store
