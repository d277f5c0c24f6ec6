#pragma once

// The report's section for a `tune --db` database: the energy and time per iteration against the setting,
// the setting over the job's time, and the decision trace. Drawn as inline SVG (no script): a tune trace
// is a few dozen points, and the page must show it even where the charts' script is blocked.

#include <string>

#include "store/tune_table.hpp"

namespace wattwise::report::html {

std::string tune_section_html(const store::TuneTrace& trace);

// The report's top box for a tune database, in place of a recommendation (the tuner already chose, while
// the job ran): what it settled on, or that it held the start value, or, for a dry run, the A/A test's
// outcome; or that the search had not ended.
std::string tune_box_html(const store::TuneTrace& trace);

}  // namespace wattwise::report::html
