#pragma once

#include <string_view>

// Files embedded into the library at build time (CMakeLists.txt, embed_file.cmake): the report carries
// them, so it opens with no network.
namespace wattwise::report::html::embedded {

std::string_view chartjs();     // Chart.js, from Debian's libjs-chart.js
std::string_view report_js();   // assets/report.js: draws every chart from the data blob
std::string_view report_css();  // assets/report.css

}  // namespace wattwise::report::html::embedded
