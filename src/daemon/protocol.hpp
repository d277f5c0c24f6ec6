#pragma once

// The settings daemon's wire format (docs/operators.md "The settings daemon"): a client holds one Unix stream
// connection for as long as its settings must last, and sends one request line at a time; the daemon answers
// each with one reply line. Who asks is the kernel's word (SO_PEERCRED), never the message's.
//
//   requests  wwd1 set <gpu> <knob> <value>     knob: power_limit_w | sm_clock_mhz | mem_clock_mhz
//             wwd1 check <gpu> <knob> <value>   would `set` be allowed now? decided as set decides, nothing
//                                               changed or held (a sweep asks this of every planned value first)
//             wwd1 release <gpu>                puts that GPU back and gives it up
//             wwd1 release all
//             wwd1 allowed                      what the policy lets this user do, one line
//   replies   wwd1 ok [text]
//             wwd1 refused <why: names the rule>
//             wwd1 bad <why: the request is not one>
//             wwd1 failed <why: the GPU or the daemon could not do it>
//
// <gpu> is the GPU's NVML index. A connection that closes (exit, kill -9) has every GPU it holds put back.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace wattwise::daemon {

// A request line is short; anything longer is refused without being read further.
inline constexpr std::size_t kMaxLineBytes = 256;
// No GPU takes a limit or a clock near this: a larger value is no setting.
inline constexpr double kMaxValue = 100000;

enum class Knob { kPowerLimitW, kSmClockMhz, kMemClockMhz };
std::string_view to_string(Knob knob);  // "power_limit_w", ...
std::optional<Knob> parse_knob(std::string_view text);
std::string_view unit_of(Knob knob);  // "W", "MHz"

struct Request {
  enum class Kind { kSet, kCheck, kRelease, kReleaseAll, kAllowed };
  Kind kind = Kind::kAllowed;
  unsigned gpu = 0;                // kSet, kCheck, kRelease
  Knob knob = Knob::kPowerLimitW;  // kSet, kCheck
  double value = 0;                // kSet, kCheck: watts or MHz (a whole number), from 1 to kMaxValue
  bool operator==(const Request&) const = default;
};

// Parses one request line (without its newline; a trailing '\r' is allowed); any bytes. nullopt with `why`
// set when it is not one.
std::optional<Request> parse_request(std::string_view line, std::string* why = nullptr);
// The line, newline included.
std::string format_request(const Request& request);

struct Reply {
  enum class Status { kOk, kRefused, kBad, kFailed };
  Status status = Status::kOk;
  std::string text;  // one line of printable text (may be empty for kOk)
  bool operator==(const Reply&) const = default;
};

// The reply line, newline included; the text is cut to one printable line of at most 1 KiB.
std::string format_reply(const Reply& reply);
// A reply line with or without its newline; nullopt when malformed.
std::optional<Reply> parse_reply(std::string_view line);
std::string_view to_string(Reply::Status status);  // "ok", "refused", ...

}  // namespace wattwise::daemon
