#include "cli/parse_error_line.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace wattwise::cli {
namespace {

std::string subcommand_names(const CLI::App& app) {
  std::string names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    names += (names.empty() ? "" : ", ") + sub->get_name();
  return names;
}

// The first word that is not an option: what the user meant as the subcommand.
const char* first_word(int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i)
    if (argv[i][0] != '-') return argv[i];
  return nullptr;
}

bool has_double_dash(int argc, const char* const* argv) {
  return std::any_of(argv + 1, argv + argc, [](const char* arg) { return std::string(arg) == "--"; });
}

}  // namespace

std::string parse_error_line(const CLI::App& app, const CLI::ParseError& error, int argc,
                             const char* const* argv) {
  const auto parsed = app.get_subcommands();
  if (parsed.empty()) {
    if (const char* word = first_word(argc, argv))
      return fmt::format("unknown subcommand '{}': choose one of {} (see `wattwise --help`)", word,
                         subcommand_names(app));
    return fmt::format("a subcommand is needed: one of {} (see `wattwise --help`)", subcommand_names(app));
  }
  const CLI::App* sub = parsed.front();
  const bool runs_a_job = sub->get_option_no_throw("command") != nullptr;
  if (runs_a_job && dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr &&
      !has_double_dash(argc, argv)) {
    return fmt::format(
        "{}: put `--` before the job's command, so that its own options stay its own, e.g. "
        "`wattwise {} [options] -- python3 train.py --lr 0.1`",
        error.what(), sub->get_name());
  }
  return fmt::format("{} (see `wattwise {} --help`)", error.what(), sub->get_name());
}

}  // namespace wattwise::cli
