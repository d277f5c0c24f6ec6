#pragma once

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

namespace wattwise::cli {

// An output file that is opened (and so checked for writability) before any work starts, and written
// atomically at the end: a temporary file beside it, renamed into place, so a reader never sees half a file.
class OutputFile {
 public:
  // "-" means standard output. Throws environment_error when the directory is not writable.
  explicit OutputFile(const std::string& path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream();
  void commit();  // flush and rename into place
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::filesystem::path temporary_;
  std::ofstream file_;
  bool is_stdout_ = false;
  bool committed_ = false;
};

}  // namespace wattwise::cli
