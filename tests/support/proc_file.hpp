#pragma once

// The text of a /proc file of a process that may end while it is read. Reading /proc/PID/stat of a process
// that exits between open and read fails with ESRCH, and std::istreambuf_iterator lets libstdc++'s filebuf
// throw on that ("basic_filebuf::underflow ... No such process"): a test that polls for processes ending
// failed that way now and then on a loaded machine. A process gone reads as "" here.

#include <filesystem>
#include <fstream>
#include <ios>
#include <iterator>
#include <string>

namespace wattwise::testing {

inline std::string read_proc_file(const std::filesystem::path& path) {
  try {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  } catch (const std::ios_base::failure&) {
    return {};
  }
}

}  // namespace wattwise::testing
