#pragma once

// Several watchers of one job (measure/session.hpp's JobWatcher): the live status line, the tuner and the
// server of in-process readings each want the running job, and a MeasureOptions holds one watcher.

#include <vector>

#include "measure/session.hpp"

namespace wattwise::measure {

// One JobWatcher that runs every non-empty one of `watchers` on its own thread and returns when all have
// returned (each returns once the job has ended). Empty when none is set.
JobWatcher watch_together(std::vector<JobWatcher> watchers);

}  // namespace wattwise::measure
