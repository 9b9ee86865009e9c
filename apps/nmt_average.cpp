// nmt-average: averages the parameters of the last K checkpoints of a run (or of the given files)
// into one checkpoint, as the paper does before decoding. It streams: memory holds the running
// mean (one model) and one input tensor, whatever K and the checkpoints' size. With --record, the
// average is registered as an artifact (kind "averaged") of the run's tracked run (its run.json),
// at the daemon of the --tracker-* flags, else of the checkpoints' config, else NMT_TRACKER_URL;
// what the daemon does not take waits in the run directory for `nmt-tracker sync`
// (tracking/run_records.h).

#include <filesystem>
#include <optional>

#include "apps/tool_main.h"
#include "apps/tracker_flags.h"
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
  bool record = false;
  nmt::tracker::DaemonSettings tracker;
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
  app.add_flag("--record", record,
               "Register the average as an artifact of the run's tracked run (needs --run-dir)")
      ->needs(run);
  nmt::apps::add_tracker_flags(
      app, tracker, "With --record: ", "the checkpoints' tracker.url or tracker.port_file");
  return nmt::apps::run_main(app, argc, argv, [&] {
    if (inputs.empty() && run_dir.empty()) throw nmt::UsageError("give --run-dir or --inputs");
    if (inputs.empty() && last_option->count() == 0) {
      // The count the run's recipe chose, from the config its newest checkpoint carries.
      const auto newest = nmt::checkpoint::last_checkpoints(run_dir, 1).front();
      last = nmt::checkpoint::CheckpointReader(newest).config().decode.average_last;
    }
    const auto identity =
        run_dir.empty() ? std::nullopt : nmt::tracking::read_run_identity(run_dir);
    const auto chosen = inputs.empty() ? nmt::checkpoint::last_checkpoints(
                                             run_dir, last, identity ? identity->uid : "")
                                       : inputs;
    std::optional<nmt::tracking::RunRecorder> recorder;
    if (record) {
      recorder.emplace(
          nmt::apps::record_daemon(
              tracker, nmt::checkpoint::CheckpointReader(chosen.back()).config().tracker),
          run_dir, "nmt-average");
    }
    const auto averaged = nmt::checkpoint::average_checkpoints(chosen, output);
    spdlog::info("wrote {} (average of {} checkpoints)", output, chosen.size());
    if (recorder) {
      const auto file = std::filesystem::absolute(output).lexically_normal();
      nmt::tracking::RunRecords records;
      records.artifacts.push_back(
          {"averaged", file.string(), averaged.step, static_cast<std::int64_t>(chosen.size())});
      const auto recorded = recorder->record(records);
      if (recorded.spool_file.empty()) {
        spdlog::info("recorded in run {} (of {})", recorded.run_id.value_or(-1), run_dir);
      }
    }
    return 0;
  });
}
