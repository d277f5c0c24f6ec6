#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>

namespace wattwise::workload {

// How much of each of a job's streams a sweep keeps with its run (issue 22, item 11): the end of the
// output, where a failed job says why.
inline constexpr std::size_t kOutputTailBytes = 64 * 1024;

// The last bytes a job wrote on one stream, and how many it wrote in all.
struct StreamTail {
  std::string tail;         // at most kOutputTailBytes, the end of what was written
  std::uint64_t bytes = 0;  // everything the job wrote on the stream
  bool truncated() const { return bytes > tail.size(); }
};

// A pipe in front of one of wattwise's own output streams: the job writes into write_fd() (its stdout or
// stderr, LaunchSpec::stdout_fd/stderr_fd), a thread passes every byte on to `target_fd` as it comes and
// keeps the last `capacity` bytes. The job's output still reaches the terminal or log, as it did without;
// a target that went away (EPIPE: a closed pipe) no longer gets it, and the tail is kept all the same.
class OutputTee {
 public:
  explicit OutputTee(int target_fd, std::size_t capacity = kOutputTailBytes);
  OutputTee(const OutputTee&) = delete;
  OutputTee& operator=(const OutputTee&) = delete;
  ~OutputTee();

  int write_fd() const { return write_fd_; }
  // Closes wattwise's copy of the write end (the job holds its own after its start).
  void close_write_end();
  // After the job ended: passes on what is left in the pipe, stops (even if a process the job left holds
  // the write end: once nothing came for a moment) and returns the tail. Call once.
  StreamTail finish();

 private:
  void pass_through();
  int target_fd_;
  std::size_t capacity_;
  int read_fd_ = -1;
  int write_fd_ = -1;
  std::atomic<bool> finishing_{false};
  StreamTail kept_;
  std::thread thread_;
};

}  // namespace wattwise::workload
