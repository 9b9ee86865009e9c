#pragma once
// Connects a training run to nmt-trackerd: registers (or resumes) the run with its resolved
// config, typed params and provenance (nmt-train's observer of the training, tracked_training.h,
// calls this when the run starts). The client never
// blocks training (tracker/client/tracker_client.h); when the daemon is down, points wait in a
// spool file in the run directory. Where the daemon is comes resolved (tracker::resolve_daemon,
// called in main from the tool's flags, the config and the environment: daemon_sources below).
//
// The trainer knows only the MetricsSink and TrainingObserver interfaces (common/metrics_sink.h,
// trainer/train/training_observer.h), so the trainer library does not link the tracker client;
// the tools that train or evaluate link this library beside it.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/metrics_sink.h"
#include "tracker/client/daemon_address.h"
#include "tracker/client/tracker_client.h"
#include "tracking/run_identity.h"
#include "trainer/config/train_config.h"

namespace nmt::tracking {

// Where the run comes from, gathered by main (environment, build, devices): the library reads
// none of it.
struct RunProvenance {
  std::string host;                // this process's host
  std::vector<std::string> hosts;  // the distinct hosts of all ranks, rank 0's first
  std::string git_revision;
  bool git_dirty = false;       // tracked files differed from git_revision when it was built
  std::string git_diff_sha256;  // of `git diff HEAD` then; empty when clean
  std::string command_line;     // as a shell would run it again
  std::string slurm_job_id;
  std::string slurm_array_id;
  int world_size = 1;
  int rank = 0;
  std::string precision_reason;  // why the run trains in its config's train.precision
  // The libraries and machine (runtime::environment_provenance: libtorch.version, cuda.*,
  // device, gpu, cpu, ...), sent as they are.
  std::map<std::string, std::string> environment;
};

// The attempt's provenance entries, as registered with the run (tracker/API.md lists them):
// command_line, git.revision, git.dirty (true/false), git.diff_sha256, hosts, world_size,
// precision and precision.reason (the resolved config's train.precision and why), slurm.job_id,
// slurm.array_id, then `environment`'s entries; empty texts left out.
tracker::api::Params provenance_params(const RunProvenance& provenance, const RunConfig& config);

// The config flattened to "section.key" params (the tracker section left out), plus
// model.parameter_count and a sweep row's reference figures as reference.ppl, reference.bleu and
// reference.params.
tracker::api::Params flatten_params(const RunConfig& config, std::int64_t parameter_count);

// Where a training tool looks for the daemon, in order: its --tracker-url, --tracker-port-file,
// --tracker-token-file and --tracker-ca-file (`flags`), then the config's tracker section (the
// environment comes last, added by tracker::resolve_daemon).
std::vector<tracker::DaemonSource> daemon_sources(const tracker::DaemonSettings& flags,
                                                  const TrackerConfig& config);

// Records a training tool's --tracker-* `flags` in the run's tracker config, which goes into
// config.yaml and every checkpoint, so that nmt-evaluate --record finds the daemon the run
// reported to. A flag counts when tracker::is_given says so (the rule resolve_daemon reads them
// by); a flag's URL or port file replaces both of the config's.
void record_daemon_flags(const tracker::DaemonSettings& flags, TrackerConfig& config);

// What registers the run of `run_dir` under `identity`, for nmt-train and nmt-tracker sync alike:
// experiment, sweep and row from the config's tracker section; uid and attempt; the name
// (tracker.run_name, else the one run.json keeps, identity.name, else the directory's name); the
// config's text (`config_text`, config.yaml's) and its hash; the params (flatten_params); the
// directory's absolute path; and identity's hosts, world size and provenance.
tracker::RunInfo run_registration(const RunConfig& config, const std::string& config_text,
                                  const std::string& run_dir, const RunIdentity& identity,
                                  std::int64_t parameter_count);

// Creates the client for `daemon` and registers the run (run_registration, with the git revision
// and Slurm ids of `provenance`) under `identity`, which carries the attempt's provenance entries
// (provenance_params): a fresh run creates a tracked run, a resumed one continues it as its next
// attempt.
std::shared_ptr<tracker::TrackerClient> connect_tracker(const RunConfig& config,
                                                        const std::string& run_dir,
                                                        std::int64_t parameter_count,
                                                        const RunProvenance& provenance,
                                                        const RunIdentity& identity,
                                                        const tracker::DaemonAddress& daemon);

// Sends `recorded` (the run's metrics.jsonl, as trim_metrics_log kept it) to the run again:
// delivery is at least once from that durable record, and the daemon keeps one point per run, key
// and step, so the points an earlier attempt still held in memory when it was killed arrive, and
// the others change nothing. Paced so that the client's queue never overflows; non-finite values
// (null in the file) are not sent, as they never are.
void resend_recorded_metrics(tracker::TrackerClient& client,
                             const std::vector<MetricRecord>& recorded);

}  // namespace nmt::tracking
