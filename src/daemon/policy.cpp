#include "daemon/policy.hpp"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/text.hpp"

namespace wattwise::daemon {
namespace {

constexpr std::size_t kMaxPolicyBytes = 1 << 20;
constexpr std::size_t kMaxRules = 1000;
constexpr std::size_t kMaxNames = 1000;
constexpr std::size_t kMaxNameBytes = 64;
constexpr unsigned kMaxGpuIndex = 4095;
constexpr std::size_t kMaxOwnerFileBytes = 4096;

using nlohmann::json;

[[noreturn]] void refuse(const std::string& source, const std::string& where, const std::string& what) {
  throw data_error(fmt::format("policy {}: {} {}: fix the file (docs/operators.md \"The settings daemon\"); "
                               "nothing of it is used",
                               source, where, what));
}

std::vector<std::string> parse_names(const json& value, const std::string& source, const std::string& where) {
  if (!value.is_array()) refuse(source, where, "must be a list of names");
  if (value.size() > kMaxNames) refuse(source, where, fmt::format("has more than {} names", kMaxNames));
  std::vector<std::string> names;
  for (const auto& item : value) {
    if (!item.is_string()) refuse(source, where, "must hold names (strings)");
    const std::string name = item.get<std::string>();
    const bool printable = std::all_of(name.begin(), name.end(), [](char c) {
      return static_cast<unsigned char>(c) > 0x20 && static_cast<unsigned char>(c) < 0x7f;
    });
    if (name.empty() || name.size() > kMaxNameBytes || !printable)
      refuse(source, where, fmt::format("has a name that is no account name ({})", valid_utf8(cut_utf8(name, 64))));
    names.push_back(name);
  }
  return names;
}

Range parse_range(const json& value, const std::string& source, const std::string& where) {
  if (!value.is_object()) refuse(source, where, "must be {\"min\": ..., \"max\": ...}");
  Range range;
  for (const auto& [key, bound] : value.items()) {
    if (key != "min" && key != "max") refuse(source, where, fmt::format("has an unknown key '{}'", key));
    if (!bound.is_number()) refuse(source, where + "." + key, "must be a number");
    const double number = bound.get<double>();
    if (!std::isfinite(number) || number < 0 || number > kMaxValue)
      refuse(source, where + "." + key, fmt::format("must lie within 0-{}", kMaxValue));
    (key == "min" ? range.min : range.max) = number;
  }
  if (range.min && range.max && *range.min > *range.max) refuse(source, where, "has min above max");
  return range;
}

PolicyRule parse_rule(const json& value, const std::string& source, const std::string& where) {
  if (!value.is_object()) refuse(source, where, "must be an object");
  PolicyRule rule;
  for (const auto& [key, item] : value.items()) {
    const std::string field = where + "." + key;
    if (key == "users") {
      rule.users = parse_names(item, source, field);
    } else if (key == "groups") {
      rule.groups = parse_names(item, source, field);
    } else if (key == "gpus") {
      if (item.is_string() && item.get<std::string>() == "all") continue;
      if (!item.is_array() || item.empty()) refuse(source, field, "must be \"all\" or a list of GPU indices");
      std::vector<unsigned> gpus;
      for (const auto& gpu : item) {
        if (!gpu.is_number_unsigned() || gpu.get<unsigned long long>() > kMaxGpuIndex)
          refuse(source, field, fmt::format("must hold GPU indices (0-{})", kMaxGpuIndex));
        gpus.push_back(gpu.get<unsigned>());
      }
      rule.gpus = gpus;
    } else if (key == "comment") {
      if (!item.is_string()) refuse(source, field, "must be a string");
    } else if (const auto knob = parse_knob(key)) {
      rule.knobs[*knob] = parse_range(item, source, field);
    } else {
      refuse(source, field,
             "is not a field of a rule (users, groups, gpus, power_limit_w, sm_clock_mhz, mem_clock_mhz, comment)");
    }
  }
  if (rule.users.empty() && rule.groups.empty()) refuse(source, where, "names no users and no groups");
  if (rule.knobs.empty()) refuse(source, where, "grants no knob (power_limit_w, sm_clock_mhz, mem_clock_mhz)");
  return rule;
}

bool matches(const PolicyRule& rule, const Peer& peer) {
  const std::string uid = std::to_string(peer.uid);
  for (const auto& user : rule.users)
    if (user == "*" || user == peer.user || user == uid) return true;
  for (const auto& group : rule.groups)
    if (std::find(peer.groups.begin(), peer.groups.end(), group) != peer.groups.end()) return true;
  return false;
}

bool covers_gpu(const PolicyRule& rule, unsigned gpu) {
  return !rule.gpus || std::find(rule.gpus->begin(), rule.gpus->end(), gpu) != rule.gpus->end();
}

bool within(const Range& range, double value) {
  return (!range.min || value >= *range.min) && (!range.max || value <= *range.max);
}

std::string describe_range(const Range& range, Knob knob) {
  const auto unit = unit_of(knob);
  if (range.min && range.max) return fmt::format("{}-{} {}", *range.min, *range.max, unit);
  if (range.min) return fmt::format(">= {} {}", *range.min, unit);
  if (range.max) return fmt::format("<= {} {}", *range.max, unit);
  return "any value the GPU takes";
}

std::string describe_gpus(const PolicyRule& rule) {
  if (!rule.gpus) return "every GPU";
  return fmt::format("GPU {}", fmt::join(*rule.gpus, ","));
}

std::string lookup_group(gid_t gid) {
  std::vector<char> buffer(16384);
  group entry{};
  group* found = nullptr;
  if (::getgrgid_r(gid, &entry, buffer.data(), buffer.size(), &found) == 0 && found) return found->gr_name;
  return std::to_string(gid);
}

}  // namespace

Peer describe_peer(uid_t uid, gid_t gid, pid_t pid) {
  Peer peer;
  peer.uid = uid;
  peer.gid = gid;
  peer.pid = pid;
  peer.user = std::to_string(uid);
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  std::vector<gid_t> gids = {gid};
  if (::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found) {
    peer.user = found->pw_name;
    int count = 64;
    std::vector<gid_t> list(static_cast<std::size_t>(count));
    if (::getgrouplist(found->pw_name, gid, list.data(), &count) < 0 && count > 64) {
      list.resize(static_cast<std::size_t>(std::min(count, 4096)));
      count = static_cast<int>(list.size());
      if (::getgrouplist(found->pw_name, gid, list.data(), &count) < 0) count = 0;
    }
    gids.insert(gids.end(), list.begin(), list.begin() + std::max(count, 0));
  }
  std::set<gid_t> seen;
  for (gid_t g : gids) {
    if (!seen.insert(g).second) continue;
    peer.groups.push_back(lookup_group(g));
    peer.groups.push_back(std::to_string(g));  // a group may be named by its gid too
  }
  return peer;
}

Policy parse_policy(std::string_view text, const std::string& source) {
  const json document = parse_json_limited(text, "policy " + source, 16);
  if (!document.is_object()) refuse(source, "the file", "must be a JSON object");
  Policy policy;
  policy.source = source;
  bool format_seen = false;
  for (const auto& [key, value] : document.items()) {
    if (key == "format") {
      if (!value.is_number_unsigned() || value.get<unsigned long long>() != 1)
        refuse(source, "format", "must be 1 (this wattwise reads policy format 1)");
      format_seen = true;
    } else if (key == "rules") {
      if (!value.is_array()) refuse(source, "rules", "must be a list of rules");
      if (value.size() > kMaxRules) refuse(source, "rules", fmt::format("has more than {} rules", kMaxRules));
      for (std::size_t i = 0; i < value.size(); ++i)
        policy.rules.push_back(parse_rule(value[i], source, fmt::format("rules[{}]", i)));
    } else if (key == "job_owner") {
      if (!value.is_object() || value.size() != 1 || !value.contains("dir") || !value["dir"].is_string())
        refuse(source, "job_owner", "must be {\"dir\": \"/run/wattwise/gpu-owner\"}");
      const std::string dir = value["dir"].get<std::string>();
      if (dir.empty() || dir.front() != '/' || dir.size() > 1024 || dir.find('\0') != std::string::npos)
        refuse(source, "job_owner.dir", "must be an absolute path");
      policy.job_owner = JobOwnerRule{dir};
    } else if (key == "comment") {
      if (!value.is_string()) refuse(source, "comment", "must be a string");
    } else {
      refuse(source, key, "is not a field of the policy (format, rules, job_owner, comment)");
    }
  }
  if (!format_seen) refuse(source, "format", "is missing (write \"format\": 1)");
  return policy;
}

Policy read_policy(const std::filesystem::path& path) {
  return parse_policy(read_regular_file(path, kMaxPolicyBytes, "a policy file (JSON)"), path.string());
}

std::optional<std::string> policy_refusal(const Policy& policy, const Peer& peer, unsigned gpu, Knob knob,
                                          double value) {
  if (peer.uid == 0) return std::nullopt;
  const PolicyRule* near_miss = nullptr;  // a rule of this user for this knob and GPU whose range misses
  std::size_t near_index = 0;
  bool knob_elsewhere = false;
  for (std::size_t i = 0; i < policy.rules.size(); ++i) {
    const PolicyRule& rule = policy.rules[i];
    if (!matches(rule, peer)) continue;
    const auto grant = rule.knobs.find(knob);
    if (grant == rule.knobs.end()) continue;
    if (!covers_gpu(rule, gpu)) {
      knob_elsewhere = true;
      continue;
    }
    if (within(grant->second, value)) return std::nullopt;
    if (!near_miss) {
      near_miss = &rule;
      near_index = i;
    }
  }
  if (near_miss) {
    return fmt::format("the policy {} (rules[{}]) lets {} set {} on GPU {} only within {}, not {} {}",
                       policy.source, near_index, peer.user, to_string(knob), gpu,
                       describe_range(near_miss->knobs.at(knob), knob), value, unit_of(knob));
  }
  if (knob_elsewhere) {
    return fmt::format("the policy {} lets {} set {} on other GPUs, not on GPU {}", policy.source, peer.user,
                       to_string(knob), gpu);
  }
  return fmt::format("the policy {} has no rule that lets {} set {} (ask the node's administrator)",
                     policy.source, peer.user, to_string(knob));
}

std::optional<std::string> job_owner_refusal(const Policy& policy, const Peer& peer, unsigned gpu) {
  if (!policy.job_owner) return std::nullopt;
  const std::filesystem::path& dir = policy.job_owner->dir;
  const std::filesystem::path file = dir / fmt::format("gpu{}", gpu);
  const std::string rule = "only the owner of the job that holds a GPU may change it";
  struct stat dir_stat {};
  if (::stat(dir.c_str(), &dir_stat) != 0 || !S_ISDIR(dir_stat.st_mode) || dir_stat.st_uid != 0 ||
      (dir_stat.st_mode & 022) != 0) {
    return fmt::format("{} and the job owners' directory {} is missing or not root's alone, so no job holds GPU {} "
                       "(the scheduler's prolog writes it)",
                       rule, dir.string(), gpu);
  }
  const int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return fmt::format("{}, and no job holds GPU {} (no {})", rule, gpu, file.string());
  struct stat file_stat {};
  std::string content(kMaxOwnerFileBytes, '\0');
  ssize_t got = -1;
  if (::fstat(fd, &file_stat) == 0 && S_ISREG(file_stat.st_mode) && file_stat.st_uid == 0 &&
      (file_stat.st_mode & 022) == 0)
    got = ::read(fd, content.data(), content.size());
  ::close(fd);
  if (got < 0)
    return fmt::format("{}, and {} is not a regular file written by root alone: not trusted", rule, file.string());
  content.resize(static_cast<std::size_t>(got));
  // "<user or uid> [<job id>]" on the first line.
  const auto first_line = content.substr(0, content.find('\n'));
  std::vector<std::string> tokens;
  std::string token;
  for (char c : first_line + " ") {
    if (c == ' ' || c == '\t') {
      if (!token.empty()) tokens.push_back(token);
      token.clear();
    } else {
      token += c;
    }
  }
  if (tokens.empty()) return fmt::format("{}, and {} names no user", rule, file.string());
  const std::string& owner = tokens[0];
  if (owner == peer.user || owner == std::to_string(peer.uid)) return std::nullopt;
  const std::string job = tokens.size() > 1 ? fmt::format("job {} of ", for_terminal(cut_utf8(tokens[1], 64))) : "a job of ";
  return fmt::format("GPU {} is held by {}{}, not {}: {}", gpu, job, for_terminal(cut_utf8(owner, 64)), peer.user,
                     rule);
}

std::string describe_allowed(const Policy& policy, const Peer& peer) {
  if (peer.uid == 0) {
    return policy.job_owner ? "root: every knob on every GPU whose job is root's" : "root: every knob on every GPU";
  }
  std::vector<std::string> grants;
  for (const auto& rule : policy.rules) {
    if (!matches(rule, peer)) continue;
    for (const auto& [knob, range] : rule.knobs)
      grants.push_back(fmt::format("{} {} on {}", to_string(knob), describe_range(range, knob), describe_gpus(rule)));
  }
  if (grants.empty()) return fmt::format("nothing: the policy {} grants {} no knob", policy.source, peer.user);
  std::string text = fmt::format("{}", fmt::join(grants, "; "));
  if (policy.job_owner) text += "; only on GPUs whose job is yours";
  return text;
}

}  // namespace wattwise::daemon
