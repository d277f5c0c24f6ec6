// The journal reader against damaged, forged and planted files: only wattwise::Error (data_error) ever
// leaves it, a journal of an unknown format is refused, and links are never followed.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <sstream>

#include "../support/fake_gpu.hpp"
#include "../support/temp_dir.hpp"
#include "core/error.hpp"
#include "safety/journal.hpp"
#include "safety/restore.hpp"

namespace wattwise::safety {
namespace {

using wattwise::testing::FakeGpu;
using wattwise::testing::FakeGpuSystem;
using wattwise::testing::TempDir;

std::string valid_text() {
  return R"({"format": 1, "tool": "wattwise", "pid": 4242, "created_at": "2026-11-23T17:00:00Z",
             "host": "node1", "gpus": [{"uuid": "GPU-aaa", "index": 0, "name": "H100",
             "power_limit_w": 250.0, "reset_sm_clocks": true, "reset_mem_clocks": false}]})";
}

std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// `text` with its first `from` replaced by `to` (built by concatenation: GCC 12 warns falsely on replace()).
std::string replaced(const std::string& text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  if (at == std::string::npos) {
    ADD_FAILURE() << "no " << from;
    return text;
  }
  return text.substr(0, at) + to + text.substr(at + from.size());
}

ErrorKind kind_of(const std::string& text) {
  try {
    parse_journal(text);
  } catch (const Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "accepted: " << text;
  return ErrorKind::kInternal;
}

TEST(JournalReader, ReadsAValidJournal) {
  const Journal journal = parse_journal(valid_text());
  EXPECT_EQ(journal.pid, 4242);
  ASSERT_EQ(journal.gpus.size(), 1u);
  EXPECT_EQ(journal.gpus[0].power_limit_w, 250.0);
  EXPECT_TRUE(journal.gpus[0].reset_sm_clocks);
}

// Failed before: the format number was never read, so a journal of format 2 was applied as if it were 1.
TEST(JournalReader, RefusesAnUnknownFormatWithADataError) {
  for (const char* format : {"2", "0", "\"1\"", "1.5", "null"}) {
    const std::string text = replaced(valid_text(), "\"format\": 1", std::string("\"format\": ") + format);
    try {
      parse_journal(text);
      ADD_FAILURE() << "format " << format << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kData);
      EXPECT_NE(std::string(e.what()).find("format"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(kind_of(replaced(valid_text(), "\"format\": 1,", "")), ErrorKind::kData);
}

TEST(JournalReader, RefusesWrongTypesAndValuesWithADataError) {
  const std::vector<std::pair<std::string, std::string>> edits = {
      {"\"pid\": 4242", "\"pid\": -1"},
      {"\"pid\": 4242", "\"pid\": 99999999999"},
      {"\"pid\": 4242", "\"pid\": \"4242\""},
      {"\"index\": 0", "\"index\": -1"},
      {"\"index\": 0", "\"index\": 1e3"},
      {"\"power_limit_w\": 250.0", "\"power_limit_w\": -250"},
      {"\"power_limit_w\": 250.0", "\"power_limit_w\": 1e300"},
      {"\"power_limit_w\": 250.0", "\"power_limit_w\": \"250\""},
      {"\"reset_sm_clocks\": true", "\"reset_sm_clocks\": 1"},
      {"\"uuid\": \"GPU-aaa\"", "\"uuid\": \"\""},
      {"\"uuid\": \"GPU-aaa\"", "\"uuid\": \"GPU/../../x\""},
      {"\"name\": \"H100\"", "\"name\": \"\\u001b[2J\""},
      {"\"tool\": \"wattwise\"", "\"tool\": \"other\""},
      {"\"gpus\": [", "\"gpus\": 3, \"x\": ["},
  };
  for (const auto& [from, to] : edits) {
    EXPECT_EQ(kind_of(replaced(valid_text(), from, to)), ErrorKind::kData) << to;
  }
  const std::vector<std::string> garbage = {
      "", "[]", "null", "{", "\xff\xfe", std::string(2 << 20, ' ') + "{}", std::string(100000, '[')};
  for (const std::string& text : garbage) {
    EXPECT_EQ(kind_of(text), ErrorKind::kData);
  }
}

// A short fuzz in the unit tests (the libFuzzer target runs the long one): random byte edits of a valid
// journal either parse or throw wattwise::Error, never anything else.
TEST(JournalReader, RandomDamageThrowsOnlyWattwiseErrors) {
  std::mt19937 random(20261123);
  const std::string valid = valid_text();
  for (int trial = 0; trial < 20000; ++trial) {
    std::string text = valid;
    const int edits = 1 + static_cast<int>(random() % 4);
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = random() % text.size();
      const std::size_t cut = std::min<std::size_t>(text.size(), at + 1 + random() % 8);
      switch (random() % 3) {
        case 0:
          text[at] = static_cast<char>(random() % 256);
          break;
        case 1:
          text = text.substr(0, at) + text.substr(cut);
          break;
        default:
          text = text.substr(0, at) + std::string(1, "{}[]\",:0-e9tfn\\"[random() % 15]) + text.substr(at);
      }
      if (text.empty()) text.push_back('x');
    }
    try {
      parse_journal(text);
    } catch (const Error&) {
    } catch (const std::exception& e) {
      FAIL() << "trial " << trial << " threw a non-wattwise exception: " << e.what();
    }
  }
}

// Failed before: the temporary file had a predictable name and was opened with O_TRUNC, following links,
// so a link planted there made root truncate and overwrite the file it pointed at.
TEST(JournalWrite, APlantedSymlinkIsNeverFollowed) {
  TempDir dir;
  const auto victim = dir.path() / "victim";
  std::ofstream(victim) << "precious\n";
  const auto path = journal_path_for(dir.path(), 42);
  // Where the old code put its temporary file, and the journal itself.
  std::filesystem::create_symlink(victim, path.string() + ".tmp-" + std::to_string(::getpid()));
  Journal journal = new_journal();
  journal.gpus.push_back({"GPU-aaa", 0, "H100", 250.0, false, false});
  write_journal(path, journal);
  EXPECT_EQ(read_all(victim), "precious\n");
  EXPECT_EQ(read_journal(path), journal);
  EXPECT_FALSE(std::filesystem::is_symlink(path));
}

TEST(JournalRead, ASymlinkedJournalIsRefusedNotRead) {
  TempDir dir;
  const auto target = dir.path() / "elsewhere.json";
  std::ofstream(target) << valid_text();
  const auto path = journal_path_for(dir.path(), 42);
  std::filesystem::create_symlink(target, path);
  try {
    read_journal(path);
    FAIL() << "a link was read as a journal";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kData);
    EXPECT_NE(std::string(e.what()).find("symbolic link"), std::string::npos) << e.what();
  }
}

TEST(JournalRead, AFifoUnderTheJournalsNameDoesNotHang) {
  TempDir dir;
  const auto path = journal_path_for(dir.path(), 42);
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  EXPECT_THROW(read_journal(path), Error);
}

// Failed before: restore_from_journal_file applied a journal of an unknown format.
TEST(RestoreFromFile, AJournalOfAnUnknownFormatIsRefusedAndKept) {
  TempDir dir;
  FakeGpuSystem system;
  system.add(std::make_unique<FakeGpu>(0, "GPU-aaa", 300));
  const auto path = journal_path_for(dir.path(), 4242);
  const std::string text = replaced(valid_text(), "\"format\": 1", "\"format\": 7");
  std::ofstream(path) << text;
  try {
    restore_from_journal_file(system, path);
    FAIL() << "applied";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kData);
  }
  EXPECT_EQ(system.fake(0).limit_w(), 300);
  EXPECT_EQ(read_all(path), text);
}

// Failed before: the whole journal was kept, so a later `wattwise restore` put the healthy GPU's old limit
// back over whatever had been set on it since.
TEST(RestoreFromFile, APartialRestoreKeepsTheJournalForTheFailedGpuOnly) {
  TempDir dir;
  FakeGpuSystem system;
  system.add(std::make_unique<FakeGpu>(0, "GPU-aaa", 300));
  Journal journal = new_journal();
  journal.pid = 99999999;
  journal.gpus.push_back({"GPU-aaa", 0, "H100", 250.0, false, false});
  journal.gpus.push_back({"GPU-gone", 1, "H100", 200.0, false, false});
  const auto path = journal_path_for(dir.path(), 99999999);
  write_journal(path, journal);
  const RestoreReport report = restore_from_journal_file(system, path);
  EXPECT_FALSE(report.all_ok());
  EXPECT_EQ(system.fake(0).limit_w(), 250);
  EXPECT_EQ(report.failed_uuids(), std::vector<std::string>{"GPU-gone"});
  const Journal kept = read_journal(path);
  ASSERT_EQ(kept.gpus.size(), 1u);
  EXPECT_EQ(kept.gpus[0].uuid, "GPU-gone");
  EXPECT_EQ(kept.pid, 99999999);
  EXPECT_NE(report.summary().find("journal kept at"), std::string::npos) << report.summary();
}

}  // namespace
}  // namespace wattwise::safety
