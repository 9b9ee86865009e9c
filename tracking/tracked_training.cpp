#include "tracking/tracked_training.h"

#include <chrono>
#include <filesystem>
#include <utility>

#include "common/run_layout.h"

namespace nmt::tracking {

namespace {

tracker::RunStatus status_of(StopReason stopped) {
  using tracker::RunStatus;
  switch (stopped) {
    case StopReason::kPreempted:
      return RunStatus::kPreempted;
    case StopReason::kInterrupted:
      return RunStatus::kKilled;
    case StopReason::kUnrecorded:
      return RunStatus::kFailed;
    case StopReason::kNone:
      break;
  }
  return RunStatus::kFinished;
}

}  // namespace

TrackedTraining::TrackedTraining(Settings settings)
    : settings_(std::move(settings)),
      tracked_(tracker::names_daemon(settings_.sources, settings_.environment)) {}

void TrackedTraining::on_start(const train::RunStart& start) {
  RunProvenance origin = settings_.provenance;
  origin.precision_reason = start.precision_reason;
  origin.environment = start.environment;
  RunIdentity stamped = settings_.identity;
  stamped.provenance = provenance_params(origin, start.config);
  write_run_identity(settings_.run_dir, stamped);
  if (!tracked_) return;
  auto client = connect_tracker(
      start.config, settings_.run_dir, start.config.model.expected_parameter_count(), origin,
      stamped, tracker::resolve_daemon(settings_.sources, settings_.environment).value());
  // What earlier attempts recorded, sent again: the daemon keeps one point per key and step, so
  // whatever a killed attempt still held in memory arrives now.
  resend_recorded_metrics(*client, settings_.recorded);
  settings_.recorded.clear();
  const std::lock_guard<std::mutex> lock(mutex_);
  client_ = std::move(client);
}

void TrackedTraining::on_checkpoint(const std::string& path, std::int64_t step) {
  if (!client_) return;
  const auto file = std::filesystem::absolute(path).lexically_normal();
  const bool best = run_layout::is_best_checkpoint(file.filename().string());
  client_->log_artifact({best ? "best" : "checkpoint", file.string(), step, std::nullopt});
}

void TrackedTraining::on_end(const train::TrainResult& result) {
  if (!client_) return;
  client_->set_status(status_of(result.stopped));
  client_->flush(std::chrono::seconds(result.stopped == StopReason::kNone ? 10 : 5));
}

void TrackedTraining::on_failure(const std::string& what) {
  (void)what;  // the trainer's log has it; the tracker records the status
  std::shared_ptr<tracker::TrackerClient> client;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (failed_ || !client_) return;
    failed_ = true;
    client = client_;
  }
  client->set_status(tracker::RunStatus::kFailed);
  client->flush(std::chrono::seconds(5));
}

void TrackedTraining::log(const std::string& key, std::int64_t step, double value) {
  if (client_) client_->log_metric(key, step, value);
}

}  // namespace nmt::tracking
