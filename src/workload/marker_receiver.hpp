#pragma once

#include <atomic>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include "workload/marker.hpp"

namespace wattwise::workload {

// The wattwise end of the marker channel: a Unix datagram socket in a fresh directory that only this
// user can enter (mode 0700), so no other user can inject markers. Receives on its own thread from
// construction until stop(); the destructor stops and removes the directory.
class MarkerReceiver {
 public:
  // The name of the environment variable that carries socket_path() to the job.
  static constexpr const char* kEnvironmentVariable = "WATTWISE_SOCKET";

  MarkerReceiver();
  ~MarkerReceiver();
  MarkerReceiver(const MarkerReceiver&) = delete;
  MarkerReceiver& operator=(const MarkerReceiver&) = delete;

  const std::filesystem::path& socket_path() const { return socket_path_; }

  // Drains what is already queued in the socket, then ends the thread. Idempotent.
  void stop();

  // The markers received so far, in arrival order.
  std::vector<Marker> markers() const;
  // Datagrams that were not valid markers; they are dropped, never fatal.
  int malformed_count() const { return malformed_count_.load(); }

 private:
  void receive_loop();
  bool receive_one();  // false when nothing was waiting

  std::filesystem::path directory_;
  std::filesystem::path socket_path_;
  int socket_fd_ = -1;
  int stop_pipe_[2] = {-1, -1};
  std::thread thread_;
  bool stopped_ = false;
  mutable std::mutex mutex_;
  std::vector<Marker> markers_;
  std::atomic<int> malformed_count_{0};
};

}  // namespace wattwise::workload
