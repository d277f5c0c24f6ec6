#include "measure/job_watchers.hpp"

#include <algorithm>
#include <exception>
#include <iostream>
#include <thread>

#include <fmt/format.h>

#include "core/thread_name.hpp"

namespace wattwise::measure {

void run_watcher(const JobWatcher& watcher, std::string_view what, const LiveJob& job,
                 const std::atomic<bool>& job_ended) {
  std::string error;
  try {
    watcher(job, job_ended);
    return;
  } catch (const std::exception& e) {
    error = e.what();
  } catch (...) {
    error = "an exception that is not a std::exception";
  }
  // The watcher is a convenience beside the job (a status line, a server, the tuner, whose guard still
  // restores the GPUs at the job's end): its failure is said once and costs nothing else.
  std::cerr << fmt::format("wattwise: warning: {} stopped: {}; the job and its measurement go on\n", what,
                           error)
            << std::flush;
}

JobWatcher named_watcher(std::string what, JobWatcher watcher) {
  if (!watcher) return {};
  return [what = std::move(what), watcher = std::move(watcher)](const LiveJob& job,
                                                                const std::atomic<bool>& job_ended) {
    run_watcher(watcher, what, job, job_ended);
  };
}

JobWatcher watch_together(std::vector<JobWatcher> watchers) {
  std::erase_if(watchers, [](const JobWatcher& w) { return !w; });
  if (watchers.empty()) return {};
  if (watchers.size() == 1) return std::move(watchers.front());
  return [watchers = std::move(watchers)](const LiveJob& job, const std::atomic<bool>& job_ended) {
    // The first on this thread, the others beside it; run_watcher catches what each throws, so every
    // join is reached and one watcher's failure leaves the others running.
    std::vector<std::thread> others;
    for (std::size_t i = 1; i < watchers.size(); ++i)
      others.push_back(named_thread("ww-job-watcher", [&job, &job_ended, &watcher = watchers[i]] {
        run_watcher(watcher, "a job watcher", job, job_ended);
      }));
    run_watcher(watchers.front(), "a job watcher", job, job_ended);
    for (auto& thread : others) thread.join();
  };
}

}  // namespace wattwise::measure
