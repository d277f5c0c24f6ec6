#include <iostream>

#include "cli/commands.hpp"
#include "cli/output_file.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "slurm/merge.hpp"
#include "slurm/merge_files.hpp"
#include "slurm/merge_report.hpp"

namespace wattwise::cli {

namespace {

struct MergeFlags {
  std::vector<std::string> inputs;
  std::string json;
  std::optional<std::string> step;
};

int run_merge(const MergeFlags& flags) {
  if (flags.inputs.empty())
    throw usage_error(
        "nothing to merge: `wattwise merge DIR` (the --out-dir of `wattwise measure` under srun)");
  // Open the output first: an unwritable path fails before anything is read.
  std::optional<OutputFile> json;
  if (!flags.json.empty()) json.emplace(flags.json);

  auto read = slurm::read_task_results(flags.inputs);
  for (const auto& line : read.skipped) std::cerr << "wattwise: " << line << "\n";
  const auto merged = slurm::merge_step(slurm::select_step(std::move(read.results), flags.step));
  for (const auto& warning : merged.at("warnings"))
    std::cerr << "wattwise: warning: " << warning.get<std::string>() << "\n";

  if (json) {
    json->stream() << json_text(merged, 1) << "\n";
    json->commit();
  }
  std::ostream& human = (json && json->path() == "-") ? std::cerr : std::cout;
  human << slurm::merge_summary(merged);
  // Written either way; 4 tells a script that some task's result is missing or partial.
  return merged.at("complete").get<bool>() ? 0 : static_cast<int>(ErrorKind::kData);
}

}  // namespace

CommandRun add_merge_command(CLI::App& app) {
  auto flags = std::make_shared<MergeFlags>();
  app.add_option("inputs", flags->inputs,
                 "the per-task results of one SLURM job: the --out-dir of `wattwise measure`, or its files");
  app.add_option("--json", flags->json, "write the merged result as JSON to this file ('-' for stdout)");
  app.add_option("--step", flags->step, "the job step to merge, when the files hold several");
  return [flags]() { return run_merge(*flags); };
}

}  // namespace wattwise::cli
