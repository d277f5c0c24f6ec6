#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace wattwise {

// The text of a JSON value for output. Strings are made valid UTF-8 where they enter wattwise
// (core/text.hpp); this is the second line of defence: a byte that slipped through becomes U+FFFD instead
// of nlohmann's type_error 316, which would lose a measured job's result as an "internal error".
inline std::string json_text(const nlohmann::json& value, int indent = -1) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace wattwise
