// TrackerClient's background side: the worker thread that batches what the trainer logged, sends
// it, spools what the daemon does not take, and replays the spool once the daemon answers again.
// The callers' side (start_run, log_*, flush) is in tracker_client.cpp.

#include <spdlog/spdlog.h>

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "tracker/api/routes.h"
#include "tracker/api/wire_json.h"
#include "tracker/api/wire_text.h"
#include "tracker/client/http_client.h"
#include "tracker/client/spool.h"
#include "tracker/client/tracker_client.h"

namespace nmt::tracker {

namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// Worth sending again later: the daemon is overloaded, restarting, or the token is being fixed
// (meanwhile the request waits in the spool). Any other refusal (400, 404, 413) would be refused
// again, so the request is dropped and logged.
bool is_retryable(int status) {
  return status >= 500 || status == 401 || status == 408 || status == 429;
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

void TrackerClient::worker_loop() {
  std::unique_lock lock(mutex_);
  while (true) {
    auto wake_at = Clock::now() + options_.flush_interval;
    const bool can_retry = (!spool_->empty() && run_id_) || !pending_registration_.empty();
    if (can_retry) wake_at = std::min(wake_at, next_attempt_);
    if (options_.heartbeat_interval.count() > 0 && run_id_) {
      wake_at = std::min(wake_at, next_heartbeat_);
    }
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
  const auto run = run_id();
  if (run && options_.heartbeat_interval.count() > 0 && Clock::now() >= next_heartbeat_) {
    heartbeat(*run);
  }
}

void TrackerClient::heartbeat(std::int64_t run) {
  next_heartbeat_ = Clock::now() + options_.heartbeat_interval;
  api::Heartbeat beat;
  {
    std::lock_guard lock(mutex_);
    beat.attempt = attempt_;
  }
  beat.rank = options_.rank;
  const api::Route& route = api::route(api::RouteId::kHeartbeat);
  std::string answer;
  bool needs_fixing = false;
  // A heartbeat that does not arrive is not sent again: the next one says the same. Failures are
  // the other requests' to report. One refused (a daemon without the route) is the last.
  const Outcome outcome =
      exchange(*http_, route.method, api::route_path(route.id, {std::to_string(run)}),
               api::wire_text(beat), answer, needs_fixing);
  if (outcome == Outcome::kRejected) {
    next_heartbeat_ = Clock::time_point::max();
    spdlog::warn("tracker: {} takes no heartbeats; none are sent any more", options_.url);
  }
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
  backoff_ = backoff_.count() == 0 ? kInitialRetryBackoff
                                   : std::min(backoff_ * 2, options_.max_retry_backoff);
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
