#pragma once

// The in-process readings' wire format (docs/windows.md): a job asks the wattwise that runs it for the energy
// of a window it marked, over a Unix stream socket, one request line and one reply line per connection:
//
//   request  ww1 W <begin ns> <end ns> [rank=N]
//   replies  ww1 ok energy_j=412.5 duration_s=1.25 method=samples gpus=0:206.1,1:206.4
//            ww1 unavailable <why, free text>
//            ww1 bad <why, free text>
//
// The times are the window's begin and end markers' (the sender's CLOCK_MONOTONIC), so the window is the
// phase instance wattwise reports at the end; the rank picks the GPU as a marker's rank does.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.hpp"

namespace wattwise::window {

// A request line is short; anything longer is refused without being read further.
inline constexpr std::size_t kMaxRequestBytes = 256;

struct WindowRequest {
  Nanos begin{0};
  Nanos end{0};
  std::optional<int> rank;  // the job's local rank: the window's energy is that rank's GPU's
};

// Parses one request line (without its newline); any bytes. nullopt with `why` set when it is not one.
std::optional<WindowRequest> parse_window_request(std::string_view line, std::string* why = nullptr);
std::string format_window_request(const WindowRequest& request);

struct GpuWindowEnergy {
  unsigned gpu_index = 0;  // the GPU's NVML index
  double energy_j = 0;
};

struct WindowAnswer {
  enum class Status { kOk, kUnavailable, kBad };
  Status status = Status::kUnavailable;
  double energy_j = 0;  // kOk: summed over the GPUs below
  double duration_s = 0;
  std::string method;                 // kOk: how it was measured (sampling::to_string(EnergyMethod))
  std::vector<GpuWindowEnergy> gpus;  // kOk: the window's GPUs, in the job's order
  std::string reason;                 // kUnavailable, kBad: one line for people

  static WindowAnswer unavailable(std::string why);
  static WindowAnswer bad(std::string why);
};

// The reply line, newline included.
std::string format_window_reply(const WindowAnswer& answer);
// Parses a reply line (with or without its newline): for the C++ tests and tools; nullopt when malformed.
std::optional<WindowAnswer> parse_window_reply(std::string_view line);

}  // namespace wattwise::window
