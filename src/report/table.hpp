#pragma once

#include <string>
#include <vector>

namespace wattwise::report {

// A plain text table for people: a header row, aligned columns, numbers right-aligned. Every cell goes
// through for_terminal (core/text.hpp): control characters and escape sequences are shown, not obeyed.
// (No Debian package offers this for C++; it is small enough to own.)
class Table {
 public:
  enum class Align { kLeft, kRight };

  explicit Table(std::vector<std::string> headers);
  // Alignment per column; defaults to left for the first column and right for the others.
  void set_align(std::size_t column, Align align);
  void add_row(std::vector<std::string> cells);
  std::size_t rows() const { return rows_.size(); }
  std::string render(const std::string& indent = "") const;

 private:
  std::vector<std::string> headers_;
  std::vector<Align> align_;
  std::vector<std::vector<std::string>> rows_;
};

// Display width of UTF-8 text in terminal columns (counts code points; our units like "±" are narrow).
std::size_t display_width(const std::string& text);

}  // namespace wattwise::report
