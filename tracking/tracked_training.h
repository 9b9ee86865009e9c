#pragma once
// nmt-train's tracked run, told of the training as one of the trainer's observers
// (trainer/train/training_observer.h), on rank 0:
// - at the start, the attempt's provenance goes into run.json, where nmt-tracker sync finds it for
//   a run that never reached a daemon; when a daemon is named, the run is registered with the
//   resolved config, what earlier attempts recorded is sent again, and from then the metrics it
//   is given as a MetricsSink go to the daemon (before: nowhere). The daemon's files (port,
//   token, CA) are read then too, so that a failure to read them ends the job as a failure in
//   training does;
// - each checkpoint written is an artifact of the run (best.h5 of kind "best");
// - the end sets the run's status from how it ended (finished, preempted, killed, failed), and
//   waits a bounded time for the daemon to take what is left: a job being stopped has seconds
//   (Slurm's KillWait), and what the daemon does not take stays in the run directory's spool;
// - a failure marks the run failed, once, from whichever thread sees it first (the training's, or
//   the watchdog that ends a job whose peer hung).

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/metrics_sink.h"
#include "tracker/client/daemon_address.h"
#include "tracker/client/tracker_client.h"
#include "tracking/run_identity.h"
#include "tracking/run_tracking.h"
#include "trainer/train/training_observer.h"

namespace nmt::tracking {

class TrackedTraining : public train::TrainingObserver, public MetricsSink {
 public:
  struct Settings {
    std::string run_dir;
    RunIdentity identity;      // this attempt's (next_run_identity), as run.json holds it
    RunProvenance provenance;  // all but what the start tells: precision reason, environment
    std::vector<tracker::DaemonSource> sources;  // daemon_sources
    tracker::GetEnv environment;
    std::vector<MetricRecord> recorded;  // metrics.jsonl as trim_metrics_log kept it
  };

  explicit TrackedTraining(Settings settings);

  // Whether a daemon is named (by the flags, the config or the environment).
  bool tracked() const { return tracked_; }

  void on_start(const train::RunStart& start) override;
  void on_checkpoint(const std::string& path, std::int64_t step) override;
  void on_end(const train::TrainResult& result) override;
  void on_failure(const std::string& what) override;

  void log(const std::string& key, std::int64_t step, double value) override;

 private:
  Settings settings_;
  bool tracked_;
  std::mutex mutex_;  // client_ as the failure path reads it, and failed_
  std::shared_ptr<tracker::TrackerClient> client_;
  bool failed_ = false;
};

}  // namespace nmt::tracking
