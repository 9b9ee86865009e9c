// TrackerClient's callers' side: options, registration, the non-blocking log_* calls, flush and
// the statistics. The worker thread that delivers what they queue is in
// tracker_client_delivery.cpp.

#include "tracker/client/tracker_client.h"

#include <spdlog/spdlog.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "tracker/api/wire_json.h"
#include "tracker/api/wire_text.h"
#include "tracker/client/http_client.h"
#include "tracker/client/spool.h"

namespace nmt::tracker {

namespace {

using Clock = std::chrono::steady_clock;

// flush() tries again this often while the daemon does not answer, whatever the backoff.
constexpr std::chrono::milliseconds kFlushRetryPause{200};

// A restarted trainer (a requeued Slurm job) reports to the same run and rank again, and the
// daemon drops any batch whose (run, rank, sequence) it has seen. So sequences must never repeat
// across processes: they start at the wall clock in milliseconds shifted left by 20 bits (about
// 2^61), which leaves a million batches per millisecond of uptime before two clients could meet.
constexpr int kSequenceCounterBits = 20;

std::int64_t initial_sequence(std::optional<std::int64_t> max_spooled) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  const std::int64_t from_clock = static_cast<std::int64_t>(ms) << kSequenceCounterBits;
  return max_spooled ? std::max(from_clock, *max_spooled + 1) : from_clock;
}

double unix_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

bool is_power_of_two(std::int64_t n) {
  return n > 0 && (n & (n - 1)) == 0;
}

// An empty string in a registration means "not given".
void drop_empty(std::optional<std::string>& field) {
  if (field && field->empty()) field.reset();
}

RunInfo without_empty_fields(RunInfo info) {
  for (auto* field : {&info.uid, &info.sweep, &info.row_label, &info.config, &info.config_hash,
                      &info.git_revision, &info.host, &info.slurm_job_id, &info.slurm_array_id}) {
    drop_empty(*field);
  }
  return info;
}

}  // namespace

void ClientOptions::validate() const {
  auto require = [](bool ok, const std::string& message) {
    if (!ok) throw std::invalid_argument("tracker client options: " + message);
  };
  try {
    parse_url(url);
  } catch (const std::invalid_argument& e) {
    require(false, std::string("url: ") + e.what());
  }
  require(!spool_path.empty(), "spool_path is empty (put the spool in the run directory)");
  require(rank >= 0, "rank must be >= 0");
  require(batch_size > 0, "batch_size must be > 0");
  require(queue_capacity > 0, "queue_capacity must be > 0");
  require(flush_interval.count() > 0, "flush_interval must be > 0");
  require(max_retry_backoff >= kInitialRetryBackoff, "max_retry_backoff must be >= 100 ms");
  require(request_timeout.count() > 0 && start_run_timeout.count() > 0, "timeouts must be > 0");
  require(heartbeat_interval.count() >= 0, "heartbeat_interval must be >= 0 (0: none)");
}

TrackerClient::TrackerClient(ClientOptions options) : options_(std::move(options)) {
  options_.validate();
  http_ = std::make_unique<HttpClient>(parse_url(options_.url), options_.token,
                                       options_.request_timeout, options_.ca_file);
  spool_ = std::make_unique<Spool>(options_.spool_path);
  next_sequence_ = initial_sequence(spool_->max_sequence());
  stats_.spooled_requests = spool_->entries().size();
  stats_.spooled_points = spool_->points();
  worker_ = std::thread([this] { worker_loop(); });
}

TrackerClient::~TrackerClient() {
  flush(options_.close_timeout);
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  worker_.join();
  if (!spool_->empty()) {
    spdlog::warn(
        "tracker: {} metric points ({} requests) remain in the spool {}; a client started "
        "with the same spool path sends them",
        spool_->points(), spool_->entries().size(), spool_->path());
  }
}

std::optional<std::int64_t> TrackerClient::start_run(const RunInfo& info) {
  if (info.experiment.empty() || info.name.empty()) {
    throw std::invalid_argument("tracker: a run needs an experiment and a name");
  }
  RunInfo sent = without_empty_fields(info);
  if (sent.uid && !is_valid_run_uid(*sent.uid)) {
    throw std::invalid_argument("tracker: RunInfo::uid '" + *sent.uid + "' " + api::kRunUidRule);
  }
  if (sent.attempt && *sent.attempt < 1) {
    throw std::invalid_argument("tracker: RunInfo::attempt must be at least 1");
  }
  if (!sent.uid) sent.uid = generate_run_uid();
  const std::string body = api::wire_text(sent);
  {
    std::lock_guard lock(mutex_);
    if (run_started_ || run_id_) throw std::logic_error("tracker: start_run called twice");
    run_started_ = true;
    attempt_ = info.attempt;
  }
  HttpClient http(parse_url(options_.url), options_.token, options_.start_run_timeout,
                  options_.ca_file);
  std::string reason;
  bool needs_fixing = false;
  const Outcome outcome = try_register(body, http, /*on_worker=*/false, reason, needs_fixing);
  if (outcome == Outcome::kAcknowledged) return run_id();
  if (outcome == Outcome::kRetry) {
    {
      std::lock_guard lock(mutex_);
      pending_registration_ = body;
    }
    wake_.notify_one();
    if (needs_fixing) {
      spdlog::error(
          "tracker: {}; run '{}' will be registered once the daemon accepts this client, and its "
          "metrics are spooled to {} until then; training goes on",
          reason, info.name, options_.spool_path);
    } else {
      spdlog::warn(
          "tracker: no answer from {} ({}); run '{}' will be registered when it answers, and its "
          "metrics are spooled to {} until then",
          options_.url, reason, info.name, options_.spool_path);
    }
  }
  return std::nullopt;
}

void TrackerClient::attach_run(std::int64_t run_id) {
  {
    std::lock_guard lock(mutex_);
    run_id_ = run_id;
    run_started_ = true;
  }
  wake_.notify_one();
}

std::optional<std::int64_t> TrackerClient::run_id() const {
  std::lock_guard lock(mutex_);
  return run_id_;
}

void TrackerClient::log_metric(const std::string& key, std::int64_t step, double value) {
  log_metric(key, step, value, unix_seconds());
}

void TrackerClient::log_metric(const std::string& key, std::int64_t step, double value,
                               double unix_time) {
  // JSON cannot carry NaN or infinity, and one such point would get its whole batch refused.
  const bool finite = std::isfinite(value);
  Point point{key, step, value, unix_time};
  std::int64_t dropped = 0;
  {
    std::lock_guard lock(mutex_);
    if (!finite || queued_points_ >= options_.queue_capacity) {
      dropped = ++stats_.dropped_points;
    } else {
      queue_.emplace_back(std::move(point));
      if (++queued_points_ == options_.batch_size) wake_.notify_one();
    }
  }
  // The first drop is reported at once, a flood of them only logarithmically.
  if (is_power_of_two(dropped)) {
    spdlog::warn("tracker: {} metric points dropped so far (last: {} = {} at step {}{})", dropped,
                 key, value, step, finite ? ", the client queue is full" : "");
  }
}

void TrackerClient::enqueue(Request request) {
  std::lock_guard lock(mutex_);
  queue_.emplace_back(std::move(request));
}

void TrackerClient::log_eval(const EvalRecord& eval) {
  enqueue({"evals", api::wire_text(eval)});
}

void TrackerClient::log_artifact(const ArtifactRecord& artifact) {
  enqueue({"artifacts", api::wire_text(artifact)});
}

void TrackerClient::set_status(RunStatus status) {
  api::StatusUpdate update{to_string(status), std::nullopt};
  {
    std::lock_guard lock(mutex_);
    update.attempt = attempt_;
  }
  enqueue({"status", api::wire_text(update)});
}

bool TrackerClient::flush(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  std::unique_lock lock(mutex_);
  while (true) {
    const std::uint64_t epoch = ++flush_requested_;
    wake_.notify_one();
    if (!progress_.wait_until(lock, deadline, [&] { return flush_completed_ >= epoch; })) {
      return false;
    }
    if (stats_.spooled_requests == 0 && (run_id_ || !run_started_)) return true;
    if (!run_id_ && pending_registration_.empty()) return false;  // no run to send to
    // The daemon may be restarting: try again shortly, until the deadline.
    if (round_failed_) {
      progress_.wait_until(lock, std::min(deadline, Clock::now() + kFlushRetryPause),
                           [&] { return stop_; });
    }
    if (Clock::now() >= deadline) return false;
  }
}

ClientStats TrackerClient::stats() const {
  std::lock_guard lock(mutex_);
  ClientStats stats = stats_;
  stats.queued = queue_.size();
  return stats;
}
}  // namespace nmt::tracker
