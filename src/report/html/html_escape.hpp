#pragma once

#include <string>

namespace wattwise::report::html {

// Text for HTML element content and quoted attribute values: & < > " escaped.
std::string escape_html(const std::string& text);

}  // namespace wattwise::report::html
