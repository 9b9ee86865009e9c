#include "tracker/client/tracker_client.h"

#include <spdlog/spdlog.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "common/named_choices.h"
#include "tracker/api/routes.h"
#include "tracker/api/wire_json.h"
#include "tracker/client/http_client.h"
#include "tracker/client/spool.h"

namespace nmt::tracker {

namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// The words of tracker/api/run_rules.h for the statuses a trainer reports.
constexpr NamedChoices<RunStatus, 5> kRunStatuses{{{{RunStatus::kRunning, "running"},
                                                    {RunStatus::kFinished, "finished"},
                                                    {RunStatus::kFailed, "failed"},
                                                    {RunStatus::kKilled, "killed"},
                                                    {RunStatus::kPreempted, "preempted"}}}};

constexpr std::chrono::milliseconds kInitialBackoff{100};
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

// Worth sending again later: the daemon is overloaded, restarting, or the token is being fixed
// (meanwhile the request waits in the spool). Any other refusal (400, 404, 413) would be refused
// again, so the request is dropped and logged.
bool is_retryable(int status) {
  return status >= 500 || status == 401 || status == 408 || status == 429;
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

// The route a spooled request of `kind` goes to (SpoolEntry::kind, kept in spool files).
std::optional<api::RouteId> route_of(const std::string& kind) {
  if (kind == "metrics") return api::RouteId::kIngestMetrics;
  if (kind == "evals") return api::RouteId::kLogEval;
  if (kind == "artifacts") return api::RouteId::kLogArtifact;
  if (kind == "status") return api::RouteId::kSetStatus;
  return std::nullopt;
}

}  // namespace

const char* to_string(RunStatus status) {
  return kRunStatuses.name(status);
}

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
  require(max_retry_backoff >= kInitialBackoff, "max_retry_backoff must be >= 100 ms");
  require(request_timeout.count() > 0 && start_run_timeout.count() > 0, "timeouts must be > 0");
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

void TrackerClient::worker_loop() {
  std::unique_lock lock(mutex_);
  while (true) {
    auto wake_at = Clock::now() + options_.flush_interval;
    const bool can_retry = (!spool_->empty() && run_id_) || !pending_registration_.empty();
    if (can_retry) wake_at = std::min(wake_at, next_attempt_);
    wake_.wait_until(lock, wake_at, [&] {
      return stop_ || flush_requested_ > flush_completed_ || queued_points_ >= options_.batch_size;
    });
    const std::uint64_t epoch = flush_requested_;
    const bool stopping = stop_;
    std::deque<Item> items;
    items.swap(queue_);
    queued_points_ = 0;
    lock.unlock();
    try {
      run_round(std::move(items), epoch > flush_completed_, stopping);
    } catch (const std::exception& e) {
      // A full disk must not take the trainer down with it.
      spdlog::error("tracker client: {}", e.what());
    }
    lock.lock();
    stats_.spooled_requests = spool_->entries().size();
    stats_.spooled_points = spool_->points();
    round_failed_ = last_attempt_failed_;
    flush_completed_ = std::max(flush_completed_, epoch);
    progress_.notify_all();
    if (stopping) return;
  }
}

void TrackerClient::run_round(std::deque<Item> items, bool forced, bool stopping) {
  deliver(make_entries(items), stopping);
  if (stopping) return;
  std::string registration;
  {
    std::lock_guard lock(mutex_);
    registration = pending_registration_;
  }
  if (!registration.empty() && (forced || Clock::now() >= next_attempt_)) {
    std::string reason;
    bool needs_fixing = false;
    try_register(registration, *http_, /*on_worker=*/true, reason, needs_fixing);
  }
  if (!spool_->empty() && run_id() && (forced || Clock::now() >= next_attempt_)) replay();
}

std::vector<SpoolEntry> TrackerClient::make_entries(std::deque<Item>& items) {
  std::vector<SpoolEntry> entries;
  const auto run = run_id();
  api::MetricBatch batch{options_.rank, 0, {}};
  auto close_batch = [&] {
    if (batch.points.empty()) return;
    batch.sequence = next_sequence_++;
    entries.push_back(
        SpoolEntry{"metrics", run, api::wire_text(batch), batch.points.size(), batch.sequence});
    batch.points.clear();
  };
  for (auto& item : items) {
    if (auto* p = std::get_if<Point>(&item)) {
      batch.points.push_back(api::MetricPoint{std::move(p->key), p->step, p->value, p->time});
      if (batch.points.size() >= options_.batch_size) close_batch();
    } else {
      close_batch();  // keeps the order in which the trainer logged
      auto& request = std::get<Request>(item);
      entries.push_back(SpoolEntry{request.kind, run, std::move(request.body), 0, std::nullopt});
    }
  }
  close_batch();
  return entries;
}

void TrackerClient::deliver(std::vector<SpoolEntry> entries, bool stopping) {
  std::size_t sent = 0;
  const auto run = run_id();
  // Straight to the daemon only while nothing older waits in the spool, so order is kept.
  if (spool_->empty() && run && !stopping) {
    for (; sent < entries.size() && !under_pressure(); ++sent) {
      if (send(entries[sent], *run) == Outcome::kRetry) break;
    }
  }
  if (sent == entries.size()) return;
  const std::vector<SpoolEntry> rest(std::make_move_iterator(entries.begin() + sent),
                                     std::make_move_iterator(entries.end()));
  try {
    spool_->append(rest);
  } catch (const std::exception& e) {
    std::size_t points = 0;
    for (const auto& entry : rest) points += entry.points;
    spdlog::error("tracker: {}; {} requests ({} metric points) are lost", e.what(), rest.size(),
                  points);
  }
}

void TrackerClient::replay() {
  const std::int64_t run = *run_id();
  std::size_t done = 0;
  for (const auto& entry : spool_->entries()) {
    // New points come first: a long replay must not make the queue overflow.
    if (done > 0 && under_pressure()) break;
    if (send(entry, run) == Outcome::kRetry) break;
    ++done;
  }
  if (done == 0) return;
  spool_->drop_front(done);
  spdlog::info("tracker: replayed {} spooled requests, {} left", done, spool_->entries().size());
}

TrackerClient::Outcome TrackerClient::try_register(const std::string& body, HttpClient& http,
                                                   bool on_worker, std::string& reason,
                                                   bool& needs_fixing) {
  std::string answer;
  const api::Route& route = api::route(api::RouteId::kCreateRun);
  Outcome outcome = exchange(http, route.method, route.pattern, body, answer, needs_fixing);
  if (outcome == Outcome::kAcknowledged) {
    try {
      const auto reply = api::parse<api::RunCreated>(json::parse(answer));
      const std::int64_t id = reply.run_id;
      {
        std::lock_guard lock(mutex_);
        run_id_ = id;
        pending_registration_.clear();
      }
      wake_.notify_one();  // what was spooled waiting for the id can go now
      spdlog::info("tracker: reporting to run {} (attempt {}) at {}", id, reply.attempt,
                   options_.url);
    } catch (const std::exception& e) {
      answer = std::string("unreadable answer to POST /api/runs: ") + e.what();
      outcome = Outcome::kRetry;
    }
  } else if (outcome == Outcome::kRejected) {
    std::lock_guard lock(mutex_);
    pending_registration_.clear();  // refused for good: logged by exchange()
  }
  if (on_worker) outcome == Outcome::kRetry ? note_failure(answer, needs_fixing) : note_success();
  reason = std::move(answer);
  return outcome;
}

TrackerClient::Outcome TrackerClient::send(const SpoolEntry& entry, std::int64_t current_run) {
  const auto route = route_of(entry.kind);
  if (!route) {
    spdlog::error("tracker: dropping a spooled request of unknown kind '{}'", entry.kind);
    return Outcome::kRejected;
  }
  const std::string path =
      api::route_path(*route, {std::to_string(entry.run_id.value_or(current_run))});
  std::string answer;
  bool needs_fixing = false;
  const Outcome outcome =
      exchange(*http_, api::route(*route).method, path, entry.body, answer, needs_fixing);
  if (outcome == Outcome::kRetry) {
    note_failure(answer, needs_fixing);
    return outcome;
  }
  note_success();
  if (outcome == Outcome::kAcknowledged && entry.points > 0) {
    std::lock_guard lock(mutex_);
    stats_.delivered_points += static_cast<std::int64_t>(entry.points);
  }
  return outcome;
}

TrackerClient::Outcome TrackerClient::exchange(HttpClient& http, const std::string& method,
                                               const std::string& path, const std::string& body,
                                               std::string& answer, bool& needs_fixing) {
  needs_fixing = false;
  try {
    auto response = http.request(method, path, body);
    answer = std::move(response.body);
    if (response.status == 200) return Outcome::kAcknowledged;
    if (response.status == 401) {
      needs_fixing = true;
      answer = fmt::format(
          "nmt-trackerd at {} refused the token (401 on {} {}): {}", options_.url, method, path,
          options_.token.empty()
              ? "none was sent; give its token file (--tracker-token-file, tracker.token_file "
                "or NMT_TRACKER_TOKEN_FILE)"
              : "the token sent is not the daemon's; check the token file");
      return Outcome::kRetry;
    }
    if (is_retryable(response.status)) {
      answer = std::to_string(response.status) + " from " + method + " " + path + ": " + answer;
      return Outcome::kRetry;
    }
    spdlog::error("tracker: the daemon refused {} {} with {} ({}); dropping the request", method,
                  path, response.status, answer.substr(0, 300));
    return Outcome::kRejected;
  } catch (const TlsError& e) {
    needs_fixing = true;
    answer = e.what();
    return Outcome::kRetry;
  } catch (const std::exception& e) {
    answer = e.what();
    return Outcome::kRetry;
  }
}

bool TrackerClient::under_pressure() const {
  std::lock_guard lock(mutex_);
  return queued_points_ > options_.queue_capacity / 2;
}

void TrackerClient::note_failure(const std::string& reason, bool needs_fixing) {
  backoff_ =
      backoff_.count() == 0 ? kInitialBackoff : std::min(backoff_ * 2, options_.max_retry_backoff);
  next_attempt_ = Clock::now() + backoff_;
  if (!last_attempt_failed_) {
    if (needs_fixing) {
      spdlog::error(
          "tracker: {}; spooling to {} and retrying (backoff up to {} ms); nothing is delivered "
          "until that is fixed, training goes on",
          reason, options_.spool_path, options_.max_retry_backoff.count());
    } else {
      spdlog::warn("tracker: {}; spooling to {} and retrying (backoff up to {} ms)", reason,
                   options_.spool_path, options_.max_retry_backoff.count());
    }
  }
  last_attempt_failed_ = true;
}

void TrackerClient::note_success() {
  if (last_attempt_failed_) spdlog::info("tracker: {} answers again", options_.url);
  last_attempt_failed_ = false;
  backoff_ = std::chrono::milliseconds{0};
}

}  // namespace nmt::tracker
