#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "core/error.hpp"

namespace wattwise::cli {

// `wattwise exporter ...` hands every argument to wattwise-exporter beside this binary (exporter_command.cpp
// says why it is a program of its own); it parses and checks them itself, `--help` included.
CommandRun add_exporter_command(CLI::App& app) {
  app.prefix_command();
  app.set_help_flag();  // --help goes to wattwise-exporter, which knows the flags
  return [&app]() -> int {
    std::error_code ec;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
    const std::filesystem::path program = self.parent_path() / "wattwise-exporter";
    std::vector<std::string> args = {program.string()};
    for (const std::string& arg : app.remaining()) args.push_back(arg);
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    ::execv(program.c_str(), argv.data());
    throw environment_error(fmt::format("cannot run {}: {} (it is built and installed beside wattwise)",
                                        program.string(), std::strerror(errno)));
  };
}

}  // namespace wattwise::cli
