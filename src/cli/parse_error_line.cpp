#include "cli/parse_error_line.hpp"

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
  const std::string what = error.what();
  if (dynamic_cast<const CLI::RequiresError*>(&error) != nullptr && what.ends_with("requires --simulate"))
    return fmt::format(
        "{}: it sets the simulated job; a flag of your own job goes after its command, e.g. `wattwise {} "
        "python train.py --batch 128`",
        what, sub->get_name());
  return fmt::format("{} (see `wattwise {} --help`)", error.what(), sub->get_name());
}

}  // namespace wattwise::cli
