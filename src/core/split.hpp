#pragma once

#include <string_view>
#include <vector>

namespace wattwise {

// The fields of a protocol line cut at each single space ("a  b" has an empty field between): the window
// readings' and the settings daemon's lines, where two spaces are a malformed line, not one separator.
inline std::vector<std::string_view> split_spaces(std::string_view line) {
  std::vector<std::string_view> fields;
  while (!line.empty()) {
    const auto space = line.find(' ');
    fields.push_back(line.substr(0, space));
    if (space == std::string_view::npos) break;
    line.remove_prefix(space + 1);
  }
  return fields;
}

}  // namespace wattwise
