#pragma once
// A training run directory: the one owner of its layout. Every file name and pattern of a run,
// the temporaries that atomic writes leave there, and which run a checkpoint belongs to. The
// trainer writes it; nmt-evaluate, nmt-average, nmt-tracker sync and the tracker adapter read it
// (docs/formats.md describes each file).
//
//   RUN/config.yaml                     the resolved config, written at the start
//   RUN/metrics.jsonl                   metric points, one JSON object a line
//   RUN/run.json                        which tracked run this is (tracking/run_identity.h)
//   RUN/run.lock                        names the trainer holding RUN's lock (common/dir_lock.h)
//   RUN/tracker-spool-rank{N}.jsonl     rank N's points not yet delivered to the tracker
//   RUN/tracker-spool-{TIME}-{TOOL}-{PID}.jsonl
//                                       what a tool (nmt-evaluate --record...) could not deliver
//   RUN/checkpoints/step-{NNNNNNNN}.h5  a step checkpoint (the step zero-padded: names sort)
//   RUN/checkpoints/best.h5             the best checkpoint by validation
//   DIR/averaged*.h5                    an average of checkpoints (nmt-average)
//   DIR/analysis.md, DIR/analysis.svg   an error analysis (nmt-analyze), or in DIR/analysis/
//   NAME.tmp.{PID}                      an atomic write of NAME by process PID, until renamed
//                                       (common/atomic_file.h)

#include <cstdint>
#include <optional>
#include <string>

namespace nmt::run_layout {

inline constexpr const char* kConfigFile = "config.yaml";
inline constexpr const char* kMetricsFile = "metrics.jsonl";
inline constexpr const char* kIdentityFile = "run.json";
inline constexpr const char* kLockFile = "run.lock";
inline constexpr const char* kCheckpointsFolder = "checkpoints";
inline constexpr const char* kBestCheckpointFile = "best.h5";
inline constexpr const char* kAnalysisFolder = "analysis";
inline constexpr const char* kAnalysisReportFile = "analysis.md";
inline constexpr const char* kAnalysisChartFile = "analysis.svg";

std::string config_path(const std::string& run_dir);
std::string metrics_path(const std::string& run_dir);
std::string identity_path(const std::string& run_dir);
std::string checkpoints_folder(const std::string& run_dir);
std::string checkpoint_path(const std::string& run_dir, std::int64_t step);
std::string best_checkpoint_path(const std::string& run_dir);
// The spool of `rank` in `spool_dir` (the run directory, unless the tracker's settings name one).
std::string spool_path(const std::string& spool_dir, int rank);
// The spool of one process of a recording tool (`tool`: lowercase letters, digits and dashes, such
// as "nmt-evaluate"; `pid`) in `run_dir`, written at `unix_ms` (milliseconds since the Unix epoch,
// shown in UTC as 20261207T120000.123Z): a file of its own, apart from the trainer's (which a
// running trainer rewrites) and from any other tool's; the names sort by time. Throws
// std::invalid_argument for another `tool`.
std::string tool_spool_path(const std::string& run_dir, const std::string& tool,
                            std::int64_t unix_ms, long pid);

// The step of a step checkpoint's file name ("step-00000100.h5" -> 100); nullopt for any other
// name, digits past int64 included.
std::optional<std::int64_t> checkpoint_step(const std::string& file_name);
bool is_best_checkpoint(const std::string& file_name);
// "averaged*.h5": what nmt-average writes, by default or by the recipes' names.
bool is_averaged_checkpoint(const std::string& file_name);
// The rank of a spool's file name ("tracker-spool-rank3.jsonl" -> 3); nullopt for any other name.
std::optional<std::int64_t> spool_rank(const std::string& file_name);
// Whether `file_name` is a tool's spool (tool_spool_path's form).
bool is_tool_spool(const std::string& file_name);

// The process that writes the temporary `file_name`, when it is the temporary of one of the files
// the trainer writes into a run directory or its checkpoints/ folder; else nullopt.
std::optional<long> temporary_writer(const std::string& file_name);

// The training run directory a checkpoint belongs to: RUN/checkpoints/step-N.h5 (or best.h5) ->
// RUN; another file (an average) -> its folder, or that folder's train/ when only that has a
// run.json (the quickstart's and nmt-sweep's DIR/averaged.h5 beside DIR/train/).
std::string run_dir_of_checkpoint(const std::string& checkpoint);

}  // namespace nmt::run_layout
