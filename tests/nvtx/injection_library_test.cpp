// The real libwattwise-nvtx.so, loaded by fake_nvtx_loader as the NVTX runtime loads it, sending its phases
// to a real marker receiver.
#include <gtest/gtest.h>

#include "workload/marker_receiver.hpp"
#include "workload/process.hpp"

namespace wattwise::nvtx {
namespace {

using workload::Marker;
using workload::MarkerKind;

struct LoaderRun {
  int exit_code = -1;
  std::vector<Marker> markers;
};

LoaderRun run_loader(const std::vector<std::string>& ops, bool with_socket = true) {
  workload::MarkerReceiver receiver;
  workload::LaunchSpec spec;
  spec.argv = {FAKE_NVTX_LOADER, "--expect-injection"};
  spec.argv.insert(spec.argv.end(), ops.begin(), ops.end());
  spec.extra_environment["NVTX_INJECTION64_PATH"] = WATTWISE_NVTX_LIBRARY;
  // An empty WATTWISE_SOCKET is "not under wattwise" to the client, whatever the test runner's environment.
  spec.extra_environment[workload::MarkerReceiver::kEnvironmentVariable] =
      with_socket ? receiver.socket_path().string() : "";
  auto process = workload::Process::start(spec);
  LoaderRun run;
  run.exit_code = process.wait();
  receiver.stop();
  run.markers = receiver.markers();
  return run;
}

std::vector<std::string> events(const std::vector<Marker>& markers) {
  std::vector<std::string> out;
  for (const auto& m : markers)
    out.push_back((m.kind == MarkerKind::kBegin ? "B " : m.kind == MarkerKind::kEnd ? "E " : "P ") + m.name);
  return out;
}

TEST(InjectionLibrary, PushPopStartEndAndMarkBecomeMarkersThroughTheDocumentedLoader) {
  const auto run =
      run_loader({"push:training", "pushw:\u00e9poque \u2713", "pushex:forward pass", "pop", "pop",
                  "start:load", "end-thread:load", "mark:saved", "pushreg:step", "pop", "pop"});
  ASSERT_EQ(run.exit_code, 0);
  EXPECT_EQ(events(run.markers),
            (std::vector<std::string>{"B training", "B \u00e9poque \u2713", "B forward pass",
                                      "E forward pass", "E \u00e9poque \u2713", "B load", "E load", "P saved",
                                      "B step", "E step", "E training"}));
  for (std::size_t i = 1; i < run.markers.size(); ++i) EXPECT_GE(run.markers[i].t, run.markers[i - 1].t);
}

TEST(InjectionLibrary, ForkedChildMarksWithItsOwnPid) {
  const auto run = run_loader({"mark:parent", "fork:child", "mark:parent"});
  ASSERT_EQ(run.exit_code, 0);
  ASSERT_EQ(events(run.markers), (std::vector<std::string>{"P parent", "P child", "P parent"}));
  EXPECT_EQ(run.markers[0].pid, run.markers[2].pid);
  EXPECT_NE(run.markers[1].pid,
            run.markers[0].pid);  // the client's remembered pid was forgotten in the child
  EXPECT_GT(run.markers[1].pid, 0);
}

TEST(InjectionLibrary, NamedDomainsStayOutByDefault) {
  const auto run = run_loader({"push:epoch", "dpush:NCCL:AllReduce", "dpop:NCCL", "pop"});
  ASSERT_EQ(run.exit_code, 0);
  EXPECT_EQ(events(run.markers), (std::vector<std::string>{"B epoch", "E epoch"}));
}

TEST(InjectionLibrary, DeclinesOutsideWattwiseSoNvtxCallsBecomeNoOps) {
  const auto run = run_loader({"push:epoch", "pop"}, false);
  EXPECT_EQ(run.exit_code, 3);  // the loader's --expect-injection: nothing attached
  EXPECT_TRUE(run.markers.empty());
}

}  // namespace
}  // namespace wattwise::nvtx
