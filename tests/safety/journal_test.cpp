#include "safety/journal.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "../support/temp_dir.hpp"
#include "core/error.hpp"

namespace wattwise::experiment {
namespace {

using testing::TempDir;

safety::Journal sample_journal() {
  safety::Journal journal = safety::new_journal();
  // Fixed, so that two calls compare equal even across a second's boundary (it failed on a loaded VM).
  journal.created_at = "2026-01-01T00:00:00Z";
  journal.gpus.push_back({"GPU-aaa", 0, "H100", 250.0, true, false});
  journal.gpus.push_back({"GPU-bbb", 1, "H100", std::nullopt, false, true});
  return journal;
}

TEST(Journal, RoundTripsEveryField) {
  TempDir dir;
  const auto path = safety::journal_path_for(dir.path(), 42);
  safety::write_journal(path, sample_journal());
  EXPECT_EQ(safety::read_journal(path), sample_journal());
  EXPECT_EQ(safety::read_journal(path).pid, ::getpid());
}

TEST(Journal, WriteIsAtomicAndLeavesNoTemporaryFile) {
  TempDir dir;
  const auto path = safety::journal_path_for(dir.path(), 42);
  std::ofstream(path) << "old complete journal";
  safety::write_journal(path, sample_journal());
  EXPECT_EQ(safety::read_journal(path), sample_journal());
  std::vector<std::string> names;
  for (const auto& item : std::filesystem::directory_iterator(dir.path()))
    names.push_back(item.path().filename());
  EXPECT_EQ(names, std::vector<std::string>{path.filename().string()});
}

TEST(Journal, WriteReplacesTheFileByRenameNotInPlace) {
  TempDir dir;
  const auto path = safety::journal_path_for(dir.path(), 42);
  safety::write_journal(path, sample_journal());
  // A hard link to the old file keeps the old content: proof that the new journal is a new file
  // (temp + rename), not the old file truncated and rewritten.
  const auto link = dir.path() / "old-link";
  std::filesystem::create_hard_link(path, link);
  safety::Journal changed = sample_journal();
  changed.gpus.at(0).power_limit_w = 123;
  safety::write_journal(path, changed);
  EXPECT_EQ(safety::read_journal(link), sample_journal());
  EXPECT_EQ(safety::read_journal(path), changed);
}

TEST(Journal, CorruptJournalIsADataError) {
  TempDir dir;
  const auto path = safety::journal_path_for(dir.path(), 42);
  std::ofstream(path) << "{\"tool\": \"wattwise\", \"pid\":";
  try {
    safety::read_journal(path);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kData);
  }
}

TEST(Journal, FindJournalsListsOnlyJournals) {
  TempDir dir;
  safety::write_journal(safety::journal_path_for(dir.path(), 7), sample_journal());
  safety::write_journal(safety::journal_path_for(dir.path(), 8), sample_journal());
  std::ofstream(dir.path() / "gpu-GPU-aaa.lock") << "1";
  EXPECT_EQ(safety::find_journals(dir.path()),
            (std::vector<std::filesystem::path>{safety::journal_path_for(dir.path(), 7),
                                                safety::journal_path_for(dir.path(), 8)}));
}

}  // namespace
}  // namespace wattwise::experiment
