#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "e2e_fixture.hpp"
#include "local_cluster.hpp"

namespace wattwise::e2e {

// A test suite that shares one LocalCluster: started once for the suite (SetUpTestSuite calls
// start_cluster), stopped after its last test, its directory removed unless a test failed (then it is kept,
// with the daemons' logs printed). A machine that cannot run a cluster skips every test, saying why; a
// cluster that did not start fails each test with the daemons' error. `Suite` (CRTP) gives each suite its
// own cluster.
template <typename Suite>
class ClusterSuite : public E2eTest {
 protected:
  // `directory_pattern`: a mkdtemp pattern. `prepare`, called once the directory exists (cluster_dir()),
  // writes what the cluster needs there (node configs, a prolog's scripts) and returns lines for slurm.conf.
  static void start_cluster(std::string directory_pattern, int nodes, int gpus_per_node,
                            const std::function<std::string()>& prepare = {}) {
    if ((skip_reason_ = LocalCluster::unavailable_reason())) return;
    if (::mkdtemp(directory_pattern.data()) == nullptr) {
      start_error_ = "mkdtemp failed";
      return;
    }
    cluster_dir_ = directory_pattern;
    try {
      const std::string extra_conf = prepare ? prepare() : std::string();
      cluster_ = std::make_unique<LocalCluster>(cluster_dir_ / "cluster", nodes, gpus_per_node, extra_conf);
    } catch (const std::exception& e) {
      start_error_ = e.what();
      kept_ = true;  // its logs, for whoever reads the failure
    }
  }
  static void TearDownTestSuite() {
    cluster_.reset();  // stops every daemon before their files go
    if (!cluster_dir_.empty() && !kept_) std::filesystem::remove_all(cluster_dir_);
  }

  void SetUp() override {
    if (skip_reason_) GTEST_SKIP() << "SLURM test skipped: " << *skip_reason_;
    ASSERT_TRUE(cluster_) << "the local SLURM cluster did not start: " << start_error_;
    E2eTest::SetUp();
    env_ = cluster_->client_environment(env_);
  }
  void TearDown() override {
    if (cluster_ && HasFailure()) {
      kept_ = true;
      std::cerr << "SLURM daemons' logs (kept in " << cluster_dir_.string() << "):\n" << cluster_->log_tails();
    }
    if (cluster_) E2eTest::TearDown();
  }

  static const std::filesystem::path& cluster_dir() { return cluster_dir_; }
  static LocalCluster& cluster() { return *cluster_; }

 private:
  static inline std::optional<std::string> skip_reason_;
  static inline std::string start_error_;
  static inline std::filesystem::path cluster_dir_;
  static inline std::unique_ptr<LocalCluster> cluster_;
  static inline bool kept_ = false;
};

}  // namespace wattwise::e2e
