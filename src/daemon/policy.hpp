#pragma once

#include <sys/types.h>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/protocol.hpp"

namespace wattwise::daemon {

// Who is asking: the kernel's credentials of the connection (SO_PEERCRED), with the names looked up.
struct Peer {
  uid_t uid = 0;
  gid_t gid = 0;
  pid_t pid = 0;
  std::string user;                 // the account's name, or the uid in digits when it has none
  std::vector<std::string> groups;  // the names (or gids in digits) of its primary and supplementary groups
};
// Looks the names up (getpwuid_r, getgrouplist, getgrgid_r).
Peer describe_peer(uid_t uid, gid_t gid, pid_t pid);

// A knob's allowed values, both ends included; an absent end is the GPU's own.
struct Range {
  std::optional<double> min;
  std::optional<double> max;
  bool operator==(const Range&) const = default;
};

// One grant: these users and groups may set these knobs within these ranges on these GPUs.
struct PolicyRule {
  std::vector<std::string> users;   // account names, uids in digits, or "*" (everyone)
  std::vector<std::string> groups;  // group names or gids in digits
  std::optional<std::vector<unsigned>> gpus;  // NVML indices; absent: every GPU
  std::map<Knob, Range> knobs;                // a knob not named is not granted by this rule
  bool operator==(const PolicyRule&) const = default;
};

// The scheduler rule: only the owner of the job that holds a GPU may change it. The job's owner is read from
// `dir`/gpu<N>, which the scheduler's prolog writes (a user name or uid, then optionally the job id) and its
// epilog removes; the directory and the files must be root's and writable by root only.
struct JobOwnerRule {
  std::filesystem::path dir;
  bool operator==(const JobOwnerRule&) const = default;
};

// The policy file (JSON, docs/operators.md "The settings daemon"):
//   {"format": 1,
//    "rules": [{"users": ["alice"], "groups": ["gpu-users"], "gpus": [0, 1],
//               "power_limit_w": {"min": 200, "max": 700}, "sm_clock_mhz": {"min": 900}}],
//    "job_owner": {"dir": "/run/wattwise/gpu-owner"}}
// Whatever is not granted is refused; root (uid 0) is granted everything (it could change the GPU itself),
// the job-owner rule still applies to it.
struct Policy {
  std::string source;  // the file it was read from, named in refusals
  std::vector<PolicyRule> rules;
  std::optional<JobOwnerRule> job_owner;
};

// Checked whole, field by field (unknown keys are refused: a typo must not widen or narrow a grant): a
// data_error naming the file and the field. `source` names the file in errors and refusals.
Policy parse_policy(std::string_view text, const std::string& source);
// Reads a regular file of at most 1 MiB (no FIFO, no device), then parse_policy.
Policy read_policy(const std::filesystem::path& path);

// nullopt when the policy lets `peer` set `knob` to `value` on GPU `gpu`; otherwise the one-line refusal,
// naming the rule (e.g. "the policy /etc/wattwise/policy.json lets alice set power_limit_w on GPU 0 only
// within 200-700 W, not 150 W").
std::optional<std::string> policy_refusal(const Policy& policy, const Peer& peer, unsigned gpu, Knob knob,
                                          double value);
// nullopt when `peer` owns the job that holds GPU `gpu` (or the policy has no job-owner rule); otherwise the
// one-line refusal.
std::optional<std::string> job_owner_refusal(const Policy& policy, const Peer& peer, unsigned gpu);
// What the policy lets `peer` do, one line ("power_limit_w 200-700 W on GPUs 0,1; sm_clock_mhz >= 900 MHz
// on every GPU; only on GPUs whose job is yours").
std::string describe_allowed(const Policy& policy, const Peer& peer);

}  // namespace wattwise::daemon
