// nmt-trackerd: the experiment-tracking daemon. Owns the SQLite database and serves the HTTP API of
// tracker/API.md, over HTTPS with --tls-cert and --tls-key. Training jobs and the nmt-tracker CLI
// talk to it; nothing else opens the file.

#include <sys/stat.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>

#include "apps/tool_main.h"
#include "common/atomic_file.h"
#include "common/cli.h"
#include "common/open_file_limit.h"
#include "tracker/api/token_file.h"
#include "tracker/server/http_server.h"
#include "tracker/server/request_handler.h"
#include "tracker/store/database.h"
#include "tracker/store/run_store.h"
#include "tracker/store/sql_rows.h"

namespace {

namespace asio = boost::asio;
using nmt::tracker::HttpServer;
using nmt::tracker::ServerOptions;

struct DaemonOptions {
  std::string db;          // the SQLite file; created 0600 when missing
  std::string port_file;   // written once listening: the port and a newline
  std::string token_file;  // bearer token; required off loopback
  double idle_timeout_s = 30.0;
  double header_timeout_s = 10.0;
  double read_timeout_s = 30.0;
  // An attempt silent for longer is crashed: well above the client's heartbeat (30 s), which a
  // thread of its own sends through checkpoints and validation alike.
  double crashed_after_s = 300.0;
  ServerOptions server;
  nmt::tracker::HandlerOptions handler;
  // Four handler threads: JSON is parsed outside the store locks, a write (ingest) and a read (a
  // long series) run at once on their own connections, and a quick request still finds a thread.
  DaemonOptions() { server.handler_threads = 4; }
};

// A count, size or duration that must be above zero, shown with its default in --help.
template <typename T>
void add_positive(CLI::App& app, const std::string& flag, T& value, const std::string& help) {
  app.add_option(flag, value, help)->capture_default_str()->check(CLI::PositiveNumber);
}

// A size in bytes, with suffixes k, M (16M), shown with its default in --help.
template <typename T>
void add_size(CLI::App& app, const std::string& flag, T& value, const std::string& help) {
  app.add_option(flag, value, help)->capture_default_str()->transform(CLI::AsSizeValue(false));
}

void add_write_limit_flags(CLI::App& app, nmt::tracker::api::WriteLimits& w) {
  add_positive(app, "--max-name-bytes", w.max_name_bytes,
               "Longest name or key written (experiment, run name, sweep, metric and param "
               "keys, ...); longer gets 400");
  add_positive(app, "--max-text-bytes", w.max_text_bytes,
               "Longest param text value, artifact path, eval checkpoint or signature; longer "
               "gets 400");
  add_size(app, "--max-config-bytes", w.max_config_bytes,
           "Longest run config (YAML text; suffixes k, M); longer gets 400");
  add_size(app, "--max-content-bytes", w.max_content_bytes,
           "Longest artifact content (text; suffixes k, M); longer gets 400");
  add_positive(app, "--max-metric-keys", w.max_metric_keys,
               "Distinct metric keys one run may hold; a batch adding more gets 400");
  add_positive(app, "--max-params", w.max_params,
               "Params one run may hold; a registration adding more gets 400");
}

void add_limit_flags(CLI::App& app, DaemonOptions& o) {
  add_positive(app, "--max-connections", o.server.max_connections,
               "Open connections in all (a training rank holds one; lowered to what the open-file "
               "limit allows, the soft limit raised to the hard one first); more are answered 503 "
               "and closed");
  add_positive(app, "--max-connections-per-client", o.server.max_connections_per_client,
               "Open connections from one client IP address; more are answered 503 and closed");
  app.add_option_function<std::size_t>(
      "--reserved-connections", [&o](const std::size_t& n) { o.server.reserved_connections = n; },
      "Connection slots only connections that sent a request with the token may hold (default: a "
      "quarter of --max-connections)");
  add_positive(app, "--max-json-depth", o.handler.json.max_depth,
               "Deepest nesting of arrays and objects in a request body; deeper gets 400");
  add_positive(app, "--max-json-elements", o.handler.json.max_elements,
               "Most arrays, objects, items and members in a request body; more gets 400");
  add_positive(app, "--max-response-points", o.handler.max_response_points,
               "Most points in a metric series answer; longer series are downsampled");
  add_write_limit_flags(app, o.handler.writes);
}

void add_flags(CLI::App& app, DaemonOptions& o) {
  app.add_option("--db", o.db, "SQLite database file (created when missing)")->required();
  app.add_option("--bind", o.server.bind_address,
                 "Address to listen on (IP literal); anything but loopback needs --token-file")
      ->capture_default_str();
  app.add_option("--port", o.server.port, "TCP port; 0 picks a free one (see --port-file)")
      ->capture_default_str();
  app.add_option("--port-file", o.port_file,
                 "Write the listening port here (atomically) once ready; removed on clean exit");
  app.add_option("--token-file", o.token_file,
                 "File holding the bearer token every request but /api/health must carry");
  auto* cert =
      app.add_option("--tls-cert", o.server.tls_cert_file,
                     "PEM certificate chain: serve HTTPS only (with --tls-key); clients verify it");
  auto* key = app.add_option("--tls-key", o.server.tls_key_file,
                             "PEM private key of --tls-cert (keep it chmod 600)");
  cert->needs(key);
  key->needs(cert);
  app.add_option(
         "--threads", o.server.handler_threads,
         "Threads running requests (JSON work in parallel; writes on one database connection, "
         "reads on another)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 64u));
  add_size(app, "--body-limit", o.server.body_limit,
           "Largest request body in bytes (suffixes k, M: 16M); larger ones get 413");
  add_positive(app, "--idle-timeout", o.idle_timeout_s,
               "Seconds a connection may wait for its next request before it is closed");
  add_positive(app, "--header-timeout", o.header_timeout_s,
               "Seconds from a request's first byte to the end of its header");
  add_positive(app, "--read-timeout", o.read_timeout_s,
               "Seconds from a request's first byte to the end of its body");
  add_positive(app, "--crashed-after", o.crashed_after_s,
               "Seconds without a heartbeat or status after which a running attempt is marked "
               "crashed (its own heartbeat brings it back)");
  add_limit_flags(app, o);
}

bool is_loopback(const std::string& address) {
  boost::system::error_code ec;
  const auto parsed = asio::ip::make_address(address, ec);
  return !ec && parsed.is_loopback();
}

std::string read_token(const std::string& path) {
  std::string token = nmt::tracker::api::read_token_file(path, "--token-file");
  namespace fs = std::filesystem;
  const auto perms = fs::status(path).permissions();
  if ((perms & (fs::perms::group_read | fs::perms::others_read)) != fs::perms::none) {
    spdlog::warn("token file {} is readable by other users; chmod 600 it", path);
  }
  return token;
}

// The token, or empty when authentication is off. Refuses to expose an open daemon beyond this
// machine: the API writes to the database, so off-loopback it must authenticate.
std::string resolve_token(const DaemonOptions& o) {
  if (o.token_file.empty()) {
    if (!is_loopback(o.server.bind_address)) {
      throw std::runtime_error("refusing to listen on " + o.server.bind_address +
                               " without authentication: pass --token-file FILE (a bearer "
                               "token) or bind a loopback address such as 127.0.0.1");
    }
    return {};
  }
  if (!o.server.tls() && !is_loopback(o.server.bind_address)) {
    spdlog::warn(
        "serving plain HTTP on {}: the token crosses the network in clear text; give "
        "--tls-cert and --tls-key to serve HTTPS",
        o.server.bind_address);
  }
  return read_token(o.token_file);
}

std::chrono::milliseconds milliseconds(double seconds) {
  return std::chrono::milliseconds(static_cast<long>(seconds * 1000));
}

// The file a path names now: a file written again (atomically: a new file renamed over it) is
// another file.
struct FileIdentity {
  dev_t device = 0;
  ino_t inode = 0;
  bool operator==(const FileIdentity& other) const {
    return device == other.device && inode == other.inode;
  }
};

std::optional<FileIdentity> identity_of(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return std::nullopt;
  return FileIdentity{info.st_dev, info.st_ino};
}

// Removes the port file only while it is still the file this daemon wrote: a second daemon given
// the same file (or this daemon's successor on the same port, started while it was closing) has
// written its own, which must outlive this daemon. (A daemon writing it between the check and the
// removal loses its file; the window is a few microseconds at exit.)
void remove_own_port_file(const std::string& path, const std::optional<FileIdentity>& written) {
  const auto now = identity_of(path);
  if (!now) return;  // already gone
  if (!written || !(*now == *written)) {
    spdlog::info("port file {} now belongs to another daemon; left in place", path);
    return;
  }
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
}

// Marks the attempts silent for longer than --crashed-after crashed, checking a few times within
// that span (at most every 30 s), on the io thread.
class SilenceWatch {
 public:
  SilenceWatch(asio::io_context& io, nmt::tracker::RequestHandler& handler, double silence_s)
      : timer_(io),
        handler_(handler),
        silence_s_(silence_s),
        every_(milliseconds(std::clamp(silence_s / 4, 0.25, 30.0))) {}

  void start() {
    timer_.expires_after(every_);
    timer_.async_wait([this](const boost::system::error_code& ec) {
      if (ec) return;
      check();
      start();
    });
  }
  void stop() { timer_.cancel(); }

 private:
  void check() {
    try {
      for (const auto& silent : handler_.mark_silent_attempts(silence_s_)) {
        spdlog::warn(
            "run {} attempt {}: no heartbeat or status for over {} s (last contact {:.0f} s ago): "
            "crashed",
            silent.run_id, silent.attempt, silence_s_,
            nmt::tracker::now_seconds() - silent.last_contact_at);
      }
    } catch (const std::exception& e) {
      spdlog::error("looking for silent attempts: {}", e.what());
    }
  }

  asio::steady_timer timer_;
  nmt::tracker::RequestHandler& handler_;
  double silence_s_;
  std::chrono::milliseconds every_;
};

// Runs until the server has stopped and every in-flight request has been answered. A daemon
// started meanwhile on the database waits for this one (its record says "stopping").
void serve(asio::io_context& io, asio::signal_set& signals, HttpServer& server,
           const std::function<void()>& on_stop) {
  signals.async_wait([&](const boost::system::error_code& ec, int signal) {
    if (ec) return;
    spdlog::info("signal {}: stopping; in-flight requests finish", signal);
    on_stop();
    // A second signal now takes the default action, so an impatient operator can still force it.
    boost::system::error_code ignored;
    signals.clear(ignored);
    server.stop();
  });
  io.run();
}

void log_limits(const DaemonOptions& o) {
  const auto& w = o.handler.writes;
  spdlog::info(
      "limits: {} connections (at most {} before a request with the token), {} per client; "
      "body {} bytes, JSON depth {}, {} elements; {} points per series answer; timeouts idle {} "
      "s, header {} s, request {} s; names {} bytes, texts {}, config {}, artifact content {}; "
      "per run {} metric keys, {} params",
      o.server.max_connections, o.server.unproven_limit(), o.server.max_connections_per_client,
      o.server.body_limit, o.handler.json.max_depth, o.handler.json.max_elements,
      o.handler.max_response_points, o.idle_timeout_s, o.header_timeout_s, o.read_timeout_s,
      w.max_name_bytes, w.max_text_bytes, w.max_config_bytes, w.max_content_bytes,
      w.max_metric_keys, w.max_params);
}

// Opens the database, serves it until a signal, and returns the requests served once the server
// and then the database's connections are closed.
std::size_t serve_database(const DaemonOptions& o, const std::string& token, asio::io_context& io,
                           asio::signal_set& signals) {
  // One daemon per database file, held until the file is closed (declared before the database).
  const bool on_file = nmt::tracker::is_plain_file(o.db);
  std::optional<nmt::OwnerLock> owner;
  if (on_file) owner.emplace(nmt::tracker::daemon_lock_spec(o.db));
  nmt::tracker::Database db(o.db);
  nmt::tracker::RunStore store(db);
  // Reads on a connection of their own (a file database only: ":memory:" would open another one).
  std::optional<nmt::tracker::Database> read_db;
  std::optional<nmt::tracker::RunStore> reader;
  if (on_file) {
    read_db.emplace(o.db);
    reader.emplace(*read_db);
  }
  nmt::tracker::RequestHandler handler(store, token, o.handler, reader ? &*reader : nullptr);
  HttpServer server(
      io, o.server, [&handler](const nmt::tracker::Request& r) { return handler.handle(r); },
      [&handler](const nmt::tracker::Request& r) { return handler.check_header(r); });
  // Written only now: scripts take the file's appearance to mean "listening and ready".
  std::optional<FileIdentity> port_file;
  if (!o.port_file.empty()) {
    nmt::write_file_atomically(o.port_file, std::to_string(server.port()) + "\n");
    port_file = identity_of(o.port_file);
  }
  spdlog::info("listening on {}://{}:{} (database {}, schema version {}, {}{})",
               o.server.tls() ? "https" : "http", o.server.bind_address, server.port(), o.db,
               db.schema_version(), token.empty() ? "no authentication" : "bearer token required",
               o.server.tls() ? ", TLS certificate " + o.server.tls_cert_file : "");
  log_limits(o);
  SilenceWatch watch(io, handler, o.crashed_after_s);
  watch.start();
  serve(io, signals, server, [&] {
    watch.stop();
    if (owner) owner->mark_stopping();
  });
  if (!o.port_file.empty()) {
    remove_own_port_file(o.port_file, port_file);
  }
  return server.requests_served();
}

// Every connection holds a descriptor: the soft open-file limit goes up to the hard one, and the
// connection cap down to what that leaves room for.
void fit_open_files(ServerOptions& server) {
  const nmt::OpenFileLimit files = nmt::raise_open_file_limit();
  if (files.raised()) {
    spdlog::info("open files: soft limit raised from {} to {}, the hard limit", files.before,
                 files.soft);
  }
  if (const auto before = nmt::tracker::fit_to_open_files(server, files.soft)) {
    spdlog::warn(
        "--max-connections lowered from {} to {}: this process may open {} files (hard limit "
        "{}); raise the hard limit (ulimit -Hn, or LimitNOFILE= in a systemd unit) to serve more",
        *before, server.max_connections, files.soft, files.hard);
  }
}

int run_daemon(DaemonOptions& o) {
  o.server.idle_timeout = milliseconds(o.idle_timeout_s);
  o.server.header_timeout = milliseconds(o.header_timeout_s);
  o.server.read_timeout = milliseconds(o.read_timeout_s);
  fit_open_files(o.server);
  o.server.validate();
  o.handler.secure_cookie = o.server.tls();
  o.handler.validate();
  const std::string token = resolve_token(o);
  // Signals first: a SIGTERM that lands while the database opens still ends in a clean stop.
  asio::io_context io(1);
  asio::signal_set signals(io, SIGINT, SIGTERM);
  const std::size_t served = serve_database(o, token, io, signals);
  // Only now, with the file closed: a daemon started again on it once this one has exited finds
  // it free.
  spdlog::info("stopped after {} requests; database {} closed", served, o.db);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Experiment-tracking daemon: serves the HTTP API of tracker/API.md over a SQLite "
      "database.",
      "nmt-trackerd"};
  DaemonOptions options;
  add_flags(app, options);
  return nmt::apps::run_main(app, argc, argv, [&] { return run_daemon(options); });
}
