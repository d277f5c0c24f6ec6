#pragma once

#include <sys/socket.h>
#include <sys/types.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "workload/marker.hpp"

namespace wattwise::workload {

// The wattwise end of the marker channel: two Unix datagram sockets in a fresh directory (mkdtemp; others
// may pass through but not list it), each with its own queue:
//   socket_path()              in a subdirectory only this user can enter (0700): the job's own processes.
//                              No other user can send to it, so no other user can fill its queue.
//   changed_user_socket_path() reachable by anyone (0666), so that a job process that changed user
//                              (`sudo -u`, setuid) can still mark its phases; the clients fall back to it
//                              when the first is out of their reach. A flood from another user fills only
//                              this queue.
// Each datagram carries its sender's pid and uid from the kernel (SO_PASSCRED), and only this user's
// processes and this process's descendants (the job and whatever it started) are heard. Others are
// refused: counted, with the first reason kept, never fatal. Receives on its own thread from construction
// until stop(); the destructor stops and removes the directory.
class MarkerReceiver {
 public:
  // The names of the environment variables that carry socket_path() and changed_user_socket_path() to
  // the job.
  static constexpr const char* kEnvironmentVariable = "WATTWISE_SOCKET";
  static constexpr const char* kChangedUserEnvironmentVariable = "WATTWISE_SOCKET_CHANGED_USER";

  MarkerReceiver();
  ~MarkerReceiver();
  MarkerReceiver(const MarkerReceiver&) = delete;
  MarkerReceiver& operator=(const MarkerReceiver&) = delete;

  const std::filesystem::path& socket_path() const { return socket_path_; }
  const std::filesystem::path& changed_user_socket_path() const { return changed_user_socket_path_; }

  // Drains what is already queued in the socket, then ends the thread. Idempotent.
  void stop();

  // The markers received so far and not forgotten, in arrival order.
  std::vector<Marker> markers() const;
  // The markers received after the first `first` ones, in arrival order: a live reader asks for the new
  // ones only (markers_since(count so far)), so each marker is copied once. Indices count every marker
  // received, forgotten ones included; forgotten ones are not returned.
  std::vector<Marker> markers_since(std::size_t first) const;
  // Every marker received so far, forgotten ones included.
  std::size_t received_count() const;
  // A long job's measurement took the first `count` markers over (measure/phase_folding.hpp) and needs no
  // phase edge before `times_before`: both are dropped, so the receiver's memory stays bounded.
  void forget(std::size_t count, Nanos times_before);
  // The times of the markers received so far that lie in [from, to], in time order: where phases will be
  // cut, so that the sampler keeps its fine trace as it came there (sample_compaction.hpp). Each call sorts
  // only what arrived since the last one (markers arrive nearly in time order).
  std::vector<Nanos> marker_times_between(Nanos from, Nanos to);
  // Datagrams that were not valid markers; they are dropped, never fatal.
  int malformed_count() const { return malformed_count_.load(); }
  // Datagrams refused for their sender (another user's process that the job did not start), and why the
  // first one was refused (empty when none was).
  int refused_count() const;
  std::string refusal_reason() const;

 private:
  void receive_loop();
  bool receive_one(int fd);  // false when nothing was waiting
  bool admit(const ucred* sender);
  bool is_descendant(pid_t pid);

  std::filesystem::path directory_;
  std::filesystem::path socket_path_;
  std::filesystem::path changed_user_socket_path_;
  int socket_fd_ = -1;
  int changed_user_socket_fd_ = -1;
  int stop_pipe_[2] = {-1, -1};
  std::thread thread_;
  bool stopped_ = false;
  mutable std::mutex mutex_;
  std::vector<Marker> markers_;
  std::size_t forgotten_ = 0;  // markers received before markers_[0]
  std::vector<Nanos> marker_times_;  // every marker's time; sorted up to marker_times_sorted_
  std::size_t marker_times_sorted_ = 0;
  std::atomic<int> malformed_count_{0};
  int refused_count_ = 0;          // guarded by mutex_
  std::string refusal_reason_;     // guarded by mutex_
  std::set<pid_t> admitted_pids_;  // receiver thread only
};

}  // namespace wattwise::workload
