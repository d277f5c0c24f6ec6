#include "window/window_protocol.hpp"

#include <fmt/format.h>

#include "core/numbers.hpp"
#include "core/split.hpp"
#include "core/text.hpp"

namespace wattwise::window {
namespace {

constexpr std::string_view kTag = "ww1";
// As for markers (workload/marker_codec.hpp): no clock reads past 2^62 ns, and differences must not overflow.
constexpr long long kMaxTimeNs = 1LL << 62;

std::optional<WindowRequest> fail(std::string* why, std::string text) {
  if (why) *why = std::move(text);
  return std::nullopt;
}

std::string_view strip_newline(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

// "0:206.1,1:206.4" into per-GPU energies.
std::optional<std::vector<GpuWindowEnergy>> parse_gpus(std::string_view text) {
  std::vector<GpuWindowEnergy> gpus;
  while (!text.empty()) {
    const auto comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    const auto colon = item.find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    const auto index = parse_integer<unsigned>(item.substr(0, colon));
    const auto energy_j = parse_number(item.substr(colon + 1));
    if (!index || !energy_j) return std::nullopt;
    gpus.push_back({*index, *energy_j});
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return gpus;
}

}  // namespace

WindowAnswer WindowAnswer::unavailable(std::string why) {
  WindowAnswer answer;
  answer.status = Status::kUnavailable;
  answer.reason = std::move(why);
  return answer;
}

WindowAnswer WindowAnswer::bad(std::string why) {
  WindowAnswer answer;
  answer.status = Status::kBad;
  answer.reason = std::move(why);
  return answer;
}

std::optional<WindowRequest> parse_window_request(std::string_view line, std::string* why) {
  line = strip_newline(line);
  const auto fields = split_spaces(line);
  if (fields.size() < 4 || fields.size() > 5)
    return fail(why, "a request is `ww1 W BEGIN_NS END_NS [rank=N]`");
  if (fields[0] != kTag) return fail(why, "unknown version tag (wattwise speaks ww1)");
  if (fields[1] != "W") return fail(why, "unknown request kind (W asks for a window's energy)");
  const auto begin_ns = parse_integer<long long>(fields[2]);
  const auto end_ns = parse_integer<long long>(fields[3]);
  if (!begin_ns || !end_ns || *begin_ns < 0 || *end_ns < 0 || *begin_ns > kMaxTimeNs || *end_ns > kMaxTimeNs)
    return fail(why, "the window's begin and end are CLOCK_MONOTONIC nanoseconds");
  if (*end_ns < *begin_ns) return fail(why, "the window ends before it begins");
  WindowRequest request{Nanos{*begin_ns}, Nanos{*end_ns}, std::nullopt};
  if (fields.size() == 5) {
    if (!fields[4].starts_with("rank=")) return fail(why, "the only option is rank=N");
    request.rank = parse_integer<int>(fields[4].substr(5));
    if (!request.rank || *request.rank < 0) return fail(why, "rank=N takes a non-negative integer");
  }
  return request;
}

std::string format_window_request(const WindowRequest& request) {
  std::string line = fmt::format("{} W {} {}", kTag, request.begin.count(), request.end.count());
  if (request.rank) line += fmt::format(" rank={}", *request.rank);
  return line + "\n";
}

std::string format_window_reply(const WindowAnswer& answer) {
  switch (answer.status) {
    case WindowAnswer::Status::kOk: {
      std::string gpus;
      for (const auto& gpu : answer.gpus)
        gpus += fmt::format("{}{}:{}", gpus.empty() ? "" : ",", gpu.gpu_index, gpu.energy_j);
      return fmt::format("{} ok energy_j={} duration_s={} method={} gpus={}\n", kTag, answer.energy_j,
                         answer.duration_s, answer.method, gpus);
    }
    case WindowAnswer::Status::kUnavailable:
    case WindowAnswer::Status::kBad: {
      // One line whatever the reason says: a newline in it would end the reply early.
      std::string reason = valid_utf8(answer.reason);
      for (char& c : reason)
        if (c == '\n' || c == '\r') c = ' ';
      return fmt::format("{} {} {}\n", kTag,
                         answer.status == WindowAnswer::Status::kBad ? "bad" : "unavailable", reason);
    }
  }
  return fmt::format("{} bad internal error\n", kTag);
}

std::optional<WindowAnswer> parse_window_reply(std::string_view line) {
  line = strip_newline(line);
  if (!line.starts_with("ww1 ")) return std::nullopt;
  line.remove_prefix(4);
  for (const auto& [word, status] :
       {std::pair{std::string_view("unavailable "), WindowAnswer::Status::kUnavailable},
        std::pair{std::string_view("bad "), WindowAnswer::Status::kBad}}) {
    if (!line.starts_with(word)) continue;
    WindowAnswer answer;
    answer.status = status;
    answer.reason = std::string(line.substr(word.size()));
    return answer;
  }
  const auto fields = split_spaces(line);
  if (fields.empty() || fields[0] != "ok") return std::nullopt;
  WindowAnswer answer;
  answer.status = WindowAnswer::Status::kOk;
  bool has_energy = false;
  for (std::size_t i = 1; i < fields.size(); ++i) {
    const auto equals = fields[i].find('=');
    if (equals == std::string_view::npos) return std::nullopt;
    const auto key = fields[i].substr(0, equals);
    const auto value = fields[i].substr(equals + 1);
    if (key == "energy_j") {
      const auto number = parse_number(value);
      if (!number) return std::nullopt;
      answer.energy_j = *number;
      has_energy = true;
    } else if (key == "duration_s") {
      const auto number = parse_number(value);
      if (!number) return std::nullopt;
      answer.duration_s = *number;
    } else if (key == "method") {
      answer.method = std::string(value);
    } else if (key == "gpus") {
      auto gpus = parse_gpus(value);
      if (!gpus) return std::nullopt;
      answer.gpus = std::move(*gpus);
    }  // later keys are skipped: a newer wattwise may say more
  }
  if (!has_energy) return std::nullopt;
  return answer;
}

}  // namespace wattwise::window
