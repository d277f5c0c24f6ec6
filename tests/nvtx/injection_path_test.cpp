#include "nvtx/injection_path.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

#include "../support/temp_dir.hpp"
#include "core/error.hpp"

namespace wattwise::nvtx {
namespace {

class InjectionPath : public ::testing::Test {
 protected:
  void SetUp() override { std::filesystem::create_directories(root_ / "bin"); }
  std::filesystem::path touch(const std::filesystem::path& relative) {
    std::filesystem::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative) << "not really a library";
    return root_ / relative;
  }
  const wattwise::testing::TempDir temp_{"ww-nvtx-path"};
  const std::filesystem::path& root_ = temp_.path();
};

TEST_F(InjectionPath, FoundBesideTheBinaryFirst) {
  touch("lib/x86_64-linux-gnu/libwattwise-nvtx.so");
  const auto beside = touch("bin/libwattwise-nvtx.so");
  EXPECT_EQ(find_injection_library(root_ / "bin", "lib/x86_64-linux-gnu", std::nullopt), beside);
}

TEST_F(InjectionPath, FoundInTheInstallPrefixsLibraryDirectory) {
  const auto installed = touch("lib/x86_64-linux-gnu/libwattwise-nvtx.so");
  EXPECT_EQ(find_injection_library(root_ / "bin", "lib/x86_64-linux-gnu", std::nullopt), installed);
}

TEST_F(InjectionPath, OverrideWinsAndMustExist) {
  touch("bin/libwattwise-nvtx.so");
  const auto elsewhere = touch("elsewhere/custom.so");
  EXPECT_EQ(find_injection_library(root_ / "bin", "lib", elsewhere.string()), elsewhere);
  try {
    find_injection_library(root_ / "bin", "lib", (root_ / "missing.so").string());
    FAIL() << "a missing override must not fall back silently";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kEnvironment);
    EXPECT_NE(std::string(e.what()).find("WATTWISE_NVTX_LIB"), std::string::npos);
  }
}

TEST_F(InjectionPath, MissingLibraryIsAnEnvironmentErrorSayingWhereItLooked) {
  try {
    find_injection_library(root_ / "bin", "lib64", std::nullopt);
    FAIL() << "no library, no path";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kEnvironment);
    const std::string message = e.what();
    EXPECT_NE(message.find((root_ / "bin").string()), std::string::npos);
    EXPECT_NE(message.find((root_ / "lib64").string()), std::string::npos);
    EXPECT_EQ(message.find('\n'), std::string::npos);
  }
}

TEST_F(InjectionPath, EnvironmentNamesTheLibraryAndOnlyAskedDomains) {
  const auto env = injection_environment("/opt/ww/lib/libwattwise-nvtx.so", "");
  EXPECT_EQ(env.at("NVTX_INJECTION64_PATH"), "/opt/ww/lib/libwattwise-nvtx.so");
  EXPECT_EQ(env.count("WATTWISE_NVTX_DOMAINS"), 0u);
  EXPECT_EQ(injection_environment("/x.so", "NCCL").at("WATTWISE_NVTX_DOMAINS"), "NCCL");
}

}  // namespace
}  // namespace wattwise::nvtx
