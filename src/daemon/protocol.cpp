#include "daemon/protocol.hpp"

#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "core/numbers.hpp"
#include "core/split.hpp"
#include "core/text.hpp"

namespace wattwise::daemon {
namespace {

constexpr std::string_view kTag = "wwd1";
constexpr std::size_t kMaxReplyText = 1024;

std::optional<unsigned> parse_unsigned(std::string_view text) {
  if (text.size() > 9) return std::nullopt;
  return parse_integer<unsigned>(text);
}

// A plain decimal number: digits with at most one point; no sign, exponent, hex, inf or nan.
std::optional<double> parse_decimal(std::string_view text) {
  if (text.empty() || text.size() > 32) return std::nullopt;
  bool point = false, digit = false;
  for (char c : text) {
    if (c == '.' && !point) {
      point = true;
    } else if (c >= '0' && c <= '9') {
      digit = true;
    } else {
      return std::nullopt;
    }
  }
  if (!digit) return std::nullopt;
  return parse_number(text);
}

std::optional<Request> fail(std::string* why, std::string text) {
  if (why) *why = std::move(text);
  return std::nullopt;
}

std::string_view strip_line_end(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

std::string format_value(double value) {
  return fmt::format("{}", value);  // shortest form that reads back the same
}

}  // namespace

std::string_view to_string(Knob knob) {
  switch (knob) {
    case Knob::kPowerLimitW:
      return "power_limit_w";
    case Knob::kSmClockMhz:
      return "sm_clock_mhz";
    case Knob::kMemClockMhz:
      return "mem_clock_mhz";
  }
  return "?";
}

std::optional<Knob> parse_knob(std::string_view text) {
  for (Knob knob : {Knob::kPowerLimitW, Knob::kSmClockMhz, Knob::kMemClockMhz})
    if (text == to_string(knob)) return knob;
  return std::nullopt;
}

std::string_view unit_of(Knob knob) {
  return knob == Knob::kPowerLimitW ? "W" : "MHz";
}

std::optional<Request> parse_request(std::string_view line, std::string* why) {
  if (line.size() > kMaxLineBytes)
    return fail(why, fmt::format("a request is one line of at most {} bytes", kMaxLineBytes));
  line = strip_line_end(line);
  const auto fields = split_spaces(line);
  if (fields.empty() || fields[0] != kTag)
    return fail(why, "not a wattwise daemon request (they start with 'wwd1'): update the client");
  if (fields.size() < 2) return fail(why, "no request after 'wwd1'");
  const std::string_view verb = fields[1];
  Request request;
  if (verb == "allowed") {
    if (fields.size() != 2) return fail(why, "'allowed' takes nothing after it");
    request.kind = Request::Kind::kAllowed;
    return request;
  }
  if (verb == "release") {
    if (fields.size() != 3) return fail(why, "'release' takes a GPU index or 'all'");
    if (fields[2] == "all") {
      request.kind = Request::Kind::kReleaseAll;
      return request;
    }
    const auto gpu = parse_unsigned(fields[2]);
    if (!gpu) return fail(why, "'release' takes a GPU index (0, 1, ...) or 'all'");
    request.kind = Request::Kind::kRelease;
    request.gpu = *gpu;
    return request;
  }
  if (verb == "set" || verb == "check") {
    if (fields.size() != 5) return fail(why, fmt::format("'{}' takes a GPU index, a knob and a value", verb));
    const auto gpu = parse_unsigned(fields[2]);
    if (!gpu) return fail(why, "the GPU is an index (0, 1, ...)");
    const auto knob = parse_knob(fields[3]);
    if (!knob) return fail(why, "the knob is power_limit_w, sm_clock_mhz or mem_clock_mhz");
    const auto value = parse_decimal(fields[4]);
    if (!value || !std::isfinite(*value) || *value < 1 || *value > kMaxValue)
      return fail(why, fmt::format("the value is a decimal number from 1 to {}", kMaxValue));
    if (*knob != Knob::kPowerLimitW && *value != std::floor(*value))
      return fail(why, "a clock is a whole number of MHz");
    request.kind = verb == "set" ? Request::Kind::kSet : Request::Kind::kCheck;
    request.gpu = *gpu;
    request.knob = *knob;
    request.value = *value;
    return request;
  }
  return fail(why, "the requests are set, check, release and allowed");
}

std::string format_request(const Request& request) {
  switch (request.kind) {
    case Request::Kind::kAllowed:
      return fmt::format("{} allowed\n", kTag);
    case Request::Kind::kReleaseAll:
      return fmt::format("{} release all\n", kTag);
    case Request::Kind::kRelease:
      return fmt::format("{} release {}\n", kTag, request.gpu);
    case Request::Kind::kSet:
    case Request::Kind::kCheck:
      return fmt::format("{} {} {} {} {}\n", kTag, request.kind == Request::Kind::kSet ? "set" : "check",
                         request.gpu, to_string(request.knob), format_value(request.value));
  }
  return "";
}

std::string_view to_string(Reply::Status status) {
  switch (status) {
    case Reply::Status::kOk:
      return "ok";
    case Reply::Status::kRefused:
      return "refused";
    case Reply::Status::kBad:
      return "bad";
    case Reply::Status::kFailed:
      return "failed";
  }
  return "?";
}

std::string format_reply(const Reply& reply) {
  // One printable line: control characters (a newline in a driver's message) become visible escapes.
  const std::string text = cut_utf8(for_terminal(reply.text), kMaxReplyText);
  if (text.empty()) return fmt::format("{} {}\n", kTag, to_string(reply.status));
  return fmt::format("{} {} {}\n", kTag, to_string(reply.status), text);
}

std::optional<Reply> parse_reply(std::string_view line) {
  line = strip_line_end(line);
  if (line.size() > kMaxLineBytes + 2 * kMaxReplyText) return std::nullopt;
  if (line.find('\n') != std::string_view::npos) return std::nullopt;
  if (!line.starts_with(kTag) || line.size() < kTag.size() + 2 || line[kTag.size()] != ' ') return std::nullopt;
  line.remove_prefix(kTag.size() + 1);
  const auto space = line.find(' ');
  const std::string_view status = line.substr(0, space);
  Reply reply;
  bool known = false;
  for (auto s : {Reply::Status::kOk, Reply::Status::kRefused, Reply::Status::kBad, Reply::Status::kFailed}) {
    if (status == to_string(s)) {
      reply.status = s;
      known = true;
    }
  }
  if (!known) return std::nullopt;
  if (space != std::string_view::npos) reply.text = valid_utf8(line.substr(space + 1));
  return reply;
}

}  // namespace wattwise::daemon
