// nmt-average: averages the parameters of the last K checkpoints of a run (or of the given files)
// into one checkpoint, as the paper does before decoding. It streams: memory holds the running
// mean (one model) and one input tensor, whatever K and the checkpoints' size.

#include "apps/tool_main.h"
#include "common/cli.h"
#include "tracking/run_identity.h"
#include "trainer/checkpoint/averaging.h"
#include "trainer/checkpoint/checkpoint.h"

int main(int argc, char** argv) {
  CLI::App app{"Average the parameters of the last K checkpoints of a run, or of given files.",
               "nmt-average"};
  std::string run_dir, output;
  std::int64_t last = 5;
  std::vector<std::string> inputs;
  auto* run =
      app.add_option("--run-dir", run_dir, "Run directory whose newest checkpoints to average");
  auto* last_option = app.add_option(
      "--last", last,
      "How many of the newest checkpoints (default: the run's decode.average_last, the paper's "
      "5 for base and 20 for big)");
  auto* files =
      app.add_option("--inputs", inputs, "Explicit checkpoint files instead of --run-dir");
  app.add_option("--output", output, "Averaged checkpoint to write")->required();
  run->excludes(files);
  return nmt::apps::run_main(app, argc, argv, [&] {
    if (inputs.empty() && run_dir.empty()) throw nmt::UsageError("give --run-dir or --inputs");
    if (inputs.empty() && last_option->count() == 0) {
      // The count the run's recipe chose, from the config its newest checkpoint carries.
      const auto newest = nmt::checkpoint::last_checkpoints(run_dir, 1).front();
      last = nmt::checkpoint::read_checkpoint_config(newest).decode.average_last;
    }
    const auto identity = run_dir.empty() ? std::nullopt : nmt::train::read_run_identity(run_dir);
    const auto chosen = inputs.empty() ? nmt::checkpoint::last_checkpoints(
                                             run_dir, last, identity ? identity->uid : "")
                                       : inputs;
    nmt::checkpoint::average_checkpoints(chosen, output);
    spdlog::info("wrote {} (average of {} checkpoints)", output, chosen.size());
    return 0;
  });
}
