#include "report/table.hpp"

#include <algorithm>

#include "core/text.hpp"

namespace wattwise::report {

std::size_t display_width(const std::string& text) {
  // Continuation bytes of UTF-8 (10xxxxxx) do not start a new character.
  return static_cast<std::size_t>(std::count_if(
      text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

Table::Table(std::vector<std::string> headers) : headers_(std::move(headers)) {
  for (auto& header : headers_) header = for_terminal(header);
  align_.assign(headers_.size(), Align::kRight);
  if (!align_.empty()) align_[0] = Align::kLeft;
}

void Table::set_align(std::size_t column, Align align) {
  if (column < align_.size()) align_[column] = align;
}

void Table::add_row(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  // Cells carry names from outside (phase names, GPU names, labels): never let them drive the terminal.
  for (auto& cell : cells) cell = for_terminal(cell);
  rows_.push_back(std::move(cells));
}

std::string Table::render(const std::string& indent) const {
  std::vector<std::size_t> width(headers_.size(), 0);
  for (std::size_t c = 0; c < headers_.size(); ++c) width[c] = display_width(headers_[c]);
  for (const auto& row : rows_)
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], display_width(row[c]));

  auto render_row = [&](const std::vector<std::string>& cells) {
    std::string line = indent;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::size_t pad = width[c] - display_width(cells[c]);
      if (c > 0) line += "  ";
      if (align_[c] == Align::kRight) line.append(pad, ' ');
      line += cells[c];
      if (align_[c] == Align::kLeft && c + 1 < cells.size()) line.append(pad, ' ');
    }
    // Trailing blanks would only make copy-paste and line-by-line tests fragile.
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line + "\n";
  };

  std::string out = render_row(headers_);
  std::string rule = indent;
  for (std::size_t c = 0; c < headers_.size(); ++c) {
    if (c > 0) rule += "  ";
    rule.append(width[c], '-');
  }
  out += rule + "\n";
  for (const auto& row : rows_) out += render_row(row);
  return out;
}

}  // namespace wattwise::report
