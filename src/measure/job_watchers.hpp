#pragma once

// Several watchers of one job (measure/session.hpp's JobWatcher): the live status line, the tuner and the
// server of in-process readings each want the running job, and a MeasureOptions holds one watcher.

#include <string>
#include <string_view>
#include <vector>

#include "measure/session.hpp"

namespace wattwise::measure {

// One JobWatcher that runs every non-empty one of `watchers` on its own thread and returns when all have
// returned (each returns once the job has ended). Empty when none is set. One that throws ends alone
// (run_watcher): the others go on to the job's end.
JobWatcher watch_together(std::vector<JobWatcher> watchers);

// Runs `watcher` to its return; what it throws ends it and is said on stderr in one line that names it
// (`what`: "the live status line"), never anything more: an exception that left a watcher's thread would
// end the process, and the job with it (std::terminate).
void run_watcher(const JobWatcher& watcher, std::string_view what, const LiveJob& job,
                 const std::atomic<bool>& job_ended);

// `watcher` run by run_watcher under the name `what`, so the line that reports its failure names it.
JobWatcher named_watcher(std::string what, JobWatcher watcher);

}  // namespace wattwise::measure
