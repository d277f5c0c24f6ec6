#include "measure/job_watchers.hpp"

#include <algorithm>
#include <thread>

#include "core/thread_name.hpp"

namespace wattwise::measure {

JobWatcher watch_together(std::vector<JobWatcher> watchers) {
  std::erase_if(watchers, [](const JobWatcher& w) { return !w; });
  if (watchers.empty()) return {};
  if (watchers.size() == 1) return std::move(watchers.front());
  return [watchers = std::move(watchers)](const LiveJob& job, const std::atomic<bool>& job_ended) {
    // The first on this thread, the others beside it; a watcher must not throw (session.hpp), so the joins
    // are reached.
    std::vector<std::thread> others;
    for (std::size_t i = 1; i < watchers.size(); ++i)
      others.push_back(named_thread("ww-job-watcher", [&job, &job_ended, &watcher = watchers[i]] {
        watcher(job, job_ended);
      }));
    watchers.front()(job, job_ended);
    for (auto& thread : others) thread.join();
  };
}

}  // namespace wattwise::measure
