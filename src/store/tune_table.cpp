#include "store/tune_table.hpp"

#include <sqlite3.h>

#include "store/sqlite_statement.hpp"

namespace wattwise::store {
namespace {

constexpr const char* kTuneTables = R"sql(
CREATE TABLE IF NOT EXISTS tune (
  id INTEGER PRIMARY KEY CHECK (id = 1), knob TEXT NOT NULL, unit TEXT NOT NULL, metric TEXT NOT NULL,
  start_value REAL NOT NULL, settled_value REAL, profiling_iterations INTEGER NOT NULL,
  iterations INTEGER NOT NULL, dry_run INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS tune_decisions (
  seq INTEGER PRIMARY KEY, kind TEXT NOT NULL, value REAL NOT NULL, at_iteration INTEGER NOT NULL,
  estimate REAL NOT NULL, interval_low REAL NOT NULL, interval_high REAL NOT NULL,
  iterations INTEGER NOT NULL, reason TEXT NOT NULL, estimate_of REAL);
CREATE TABLE IF NOT EXISTS tune_changes (
  seq INTEGER PRIMARY KEY, value REAL NOT NULL, at_s REAL NOT NULL, at_iteration INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS tune_settings (
  value REAL PRIMARY KEY, iterations INTEGER NOT NULL, time_s_mean REAL NOT NULL, time_s_std REAL NOT NULL,
  energy_j_mean REAL, energy_j_std REAL);
)sql";

std::int64_t as_int(std::uint64_t n) {
  return static_cast<std::int64_t>(n);
}
std::uint64_t as_count(std::int64_t n) {
  return n < 0 ? 0 : static_cast<std::uint64_t>(n);
}

}  // namespace

void create_tune_tables(sqlite3* db, const std::string& path) {
  exec_sql(db, path, kTuneTables);
  // Version 9: the setting each decision's estimate is of. A version 4-8 file has the table without it.
  if (!has_column(db, path, "tune_decisions", "estimate_of"))
    exec_sql(db, path, "ALTER TABLE tune_decisions ADD COLUMN estimate_of REAL");
}

void insert_tune_trace(sqlite3* db, const std::string& path, const TuneTrace& t) {
  Statement head(
      db, path,
      "INSERT INTO tune (id, knob, unit, metric, start_value, settled_value, profiling_iterations, "
      "iterations, dry_run) VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?)");
  head.bind(1, t.knob).bind(2, t.unit).bind(3, t.metric).bind(4, t.start_value).bind(5, t.settled_value);
  head.bind(6, as_int(t.profiling_iterations)).bind(7, as_int(t.iterations)).bind(8, std::int64_t{t.dry_run});
  head.run();
  std::int64_t seq = 0;
  for (const auto& d : t.decisions) {
    Statement s(db, path,
                "INSERT INTO tune_decisions (seq, kind, value, at_iteration, estimate, interval_low, "
                "interval_high, iterations, reason, estimate_of) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    s.bind(1, seq++).bind(2, d.kind).bind(3, d.value).bind(4, as_int(d.at_iteration)).bind(5, d.estimate);
    s.bind(6, d.interval_low).bind(7, d.interval_high).bind(8, as_int(d.iterations)).bind(9, d.reason);
    s.bind(10, d.estimate_of).run();
  }
  seq = 0;
  for (const auto& c : t.changes) {
    Statement s(db, path, "INSERT INTO tune_changes (seq, value, at_s, at_iteration) VALUES (?, ?, ?, ?)");
    s.bind(1, seq++).bind(2, c.value).bind(3, c.at_s).bind(4, as_int(c.at_iteration)).run();
  }
  for (const auto& r : t.settings) {
    Statement s(db, path,
                "INSERT INTO tune_settings (value, iterations, time_s_mean, time_s_std, energy_j_mean, "
                "energy_j_std) VALUES (?, ?, ?, ?, ?, ?)");
    s.bind(1, r.value).bind(2, as_int(r.iterations)).bind(3, r.time_s_mean).bind(4, r.time_s_std);
    s.bind(5, r.energy_j_mean).bind(6, r.energy_j_std).run();
  }
}

std::optional<TuneTrace> read_tune_trace(sqlite3* db, const std::string& path) {
  Statement has(db, path, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'tune'");
  if (!has.step()) return std::nullopt;
  Statement head(db, path,
                 "SELECT knob, unit, metric, start_value, settled_value, profiling_iterations, iterations, "
                 "dry_run FROM tune WHERE id = 1");
  if (!head.step()) return std::nullopt;
  TuneTrace t;
  t.knob = head.text(0);
  t.unit = head.text(1);
  t.metric = head.text(2);
  t.start_value = head.real(3);
  t.settled_value = head.optional_real(4);
  t.profiling_iterations = as_count(head.integer(5));
  t.iterations = as_count(head.integer(6));
  t.dry_run = head.integer(7) != 0;
  // A file of version 4-8 read without being upgraded has no estimate_of: NULL, read as unknown.
  const std::string decisions_sql =
      std::string(
          "SELECT kind, value, at_iteration, estimate, interval_low, interval_high, iterations, reason, ") +
      (has_column(db, path, "tune_decisions", "estimate_of") ? "estimate_of" : "NULL") +
      " FROM tune_decisions ORDER BY seq";
  Statement decisions(db, path, decisions_sql.c_str());
  while (decisions.step())
    t.decisions.push_back({decisions.text(0), decisions.real(1), as_count(decisions.integer(2)),
                           decisions.real(3), decisions.real(4), decisions.real(5),
                           as_count(decisions.integer(6)), decisions.text(7), decisions.optional_real(8)});
  Statement changes(db, path, "SELECT value, at_s, at_iteration FROM tune_changes ORDER BY seq");
  while (changes.step())
    t.changes.push_back({changes.real(0), changes.real(1), as_count(changes.integer(2))});
  Statement settings(db, path,
                     "SELECT value, iterations, time_s_mean, time_s_std, energy_j_mean, energy_j_std FROM "
                     "tune_settings ORDER BY value");
  while (settings.step())
    t.settings.push_back({settings.real(0), as_count(settings.integer(1)), settings.real(2), settings.real(3),
                          settings.optional_real(4), settings.optional_real(5)});
  return t;
}

}  // namespace wattwise::store
