// The listener, and the admission of each connection it accepts under the caps (ServerState):
// counted in all, per client address and while unproven; a newcomer that finds the cap or the
// unproven share full takes the slot of an unproven connection, or is refused when proven ones
// hold the cap; one whose address is at its cap is refused (http_server.h).

#include "tracker/server/http_server.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <vector>

#include "tracker/server/http_session.h"

namespace nmt::tracker {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;

void ServerOptions::validate() const {
  boost::system::error_code ec;
  asio::ip::make_address(bind_address, ec);
  if (ec) {
    throw std::invalid_argument("bind address '" + bind_address +
                                "' is not an IP address (e.g. 127.0.0.1 or ::1)");
  }
  if (body_limit == 0) throw std::invalid_argument("body_limit must be positive");
  if (idle_timeout.count() <= 0) throw std::invalid_argument("idle_timeout must be positive");
  if (header_timeout.count() <= 0) throw std::invalid_argument("header_timeout must be positive");
  if (read_timeout.count() <= 0) throw std::invalid_argument("read_timeout must be positive");
  if (write_timeout.count() <= 0) throw std::invalid_argument("write_timeout must be positive");
  if (keepalive_max_requests == 0) {
    throw std::invalid_argument("keepalive_max_requests must be at least 1");
  }
  if (max_connections == 0) throw std::invalid_argument("max_connections must be at least 1");
  if (max_connections_per_client == 0) {
    throw std::invalid_argument("max_connections_per_client must be at least 1");
  }
  if (reserved_connections && *reserved_connections >= max_connections) {
    throw std::invalid_argument(fmt::format(
        "reserved_connections ({}) must be below max_connections ({}): connections that have not "
        "yet sent a request with the token need at least one slot",
        *reserved_connections, max_connections));
  }
  if (handler_threads == 0) throw std::invalid_argument("handler_threads must be at least 1");
  if (tls_cert_file.empty() != tls_key_file.empty()) {
    throw std::invalid_argument(
        "tls_cert_file and tls_key_file go together: give both (HTTPS) or neither (HTTP)");
  }
}

namespace {

// Loads one PEM file into the context; the error names the file, OpenSSL's reason and `expected`.
template <class Load>
void load_pem(const std::string& path, const char* what, const std::string& expected, Load load) {
  if (!std::ifstream(path)) {
    const std::string why = std::error_code(errno, std::generic_category()).message();
    throw std::runtime_error(fmt::format("cannot read the TLS {} file {}: {}", what, path, why));
  }
  beast::error_code ec;
  load(ec);
  if (ec) {
    throw std::runtime_error(fmt::format("the TLS {} file {} is not usable: {} ({})", what, path,
                                         ec.message(), expected));
  }
}

// The daemon's TLS: 1.2 or later, one certificate chain and its private key.
std::shared_ptr<asio::ssl::context> make_tls_context(const ServerOptions& o) {
  namespace ssl = asio::ssl;
  auto context = std::make_shared<ssl::context>(ssl::context::tls_server);
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                       ssl::context::single_dh_use);
  load_pem(
      o.tls_cert_file, "certificate", "a PEM certificate chain is expected",
      [&](beast::error_code& ec) { context->use_certificate_chain_file(o.tls_cert_file, ec); });
  load_pem(o.tls_key_file, "private key",
           "it must be the PEM private key of the certificate in " + o.tls_cert_file,
           [&](beast::error_code& ec) {
             context->use_private_key_file(o.tls_key_file, ssl::context::pem, ec);
           });
  if (SSL_CTX_check_private_key(context->native_handle()) != 1) {
    throw std::runtime_error(
        fmt::format("the TLS private key file {} does not belong to the "
                    "certificate of {}",
                    o.tls_key_file, o.tls_cert_file));
  }
  return context;
}

}  // namespace

namespace detail {
namespace {

// A failing accept (EMFILE) fails again at once; waiting a little avoids a busy loop.
constexpr std::chrono::milliseconds kAcceptRetry{100};

}  // namespace

void ServerState::start_session(tcp::socket socket, const std::shared_ptr<ServerState>& self) {
  beast::error_code ec;
  const asio::ip::address client = socket.remote_endpoint(ec).address();
  if (ec) return;  // already gone
  std::shared_ptr<SessionBase> session, victim;
  std::string why;
  const char* limit = nullptr;
  {
    std::lock_guard lock(mutex);
    if (stopping) return;
    victim = make_room(client, why, limit);
    if (why.empty()) {
      ++per_client[client];
      const auto id = next_id++;
      if (tls) {
        session = std::make_shared<Session<TlsStream>>(self, id, client, std::move(socket), *tls);
      } else {
        session = std::make_shared<Session<PlainStream>>(self, id, client, std::move(socket));
      }
      sessions.emplace(id, SessionSlot{session, client, false});
      unproven[client].insert(id);
      ++unproven_count;
    }
  }
  if (victim) victim->evict();
  if (!session) return refuse(std::move(socket), why, limit);
  session->start();
}

std::shared_ptr<SessionBase> ServerState::make_room(const asio::ip::address& client,
                                                    std::string& why, const char*& limit) {
  const auto from_client = per_client.find(client);
  const std::size_t open = from_client == per_client.end() ? 0 : from_client->second;
  if (open >= options.max_connections_per_client) {
    limit = "--max-connections-per-client";
    why = fmt::format("{} connections from {} are open, the limit per client ({})", open,
                      client.to_string(), limit);
    return nullptr;
  }
  const bool cap_full = sessions.size() >= options.max_connections;
  if (!cap_full && unproven_count < options.unproven_limit()) return nullptr;
  const std::optional<std::uint64_t> victim = eviction_candidate();
  if (!victim) {
    limit = "--max-connections";
    why = fmt::format("{} connections are open, the limit ({})", sessions.size(), limit);
    return nullptr;
  }
  if (evictions.note()) {
    spdlog::warn(
        "closing connections that sent no request with the token to admit new ones: one from {} "
        "for one from {}, as {} is full ({} open, {} unproven of at most {}; {} closed so far)",
        sessions.at(*victim).client.to_string(), client.to_string(),
        cap_full ? "the connection cap (--max-connections)"
                 : "the unproven share (--max-connections less --reserved-connections)",
        sessions.size(), unproven_count, options.unproven_limit(), evictions.count());
  }
  return release(*victim);
}

std::optional<std::uint64_t> ServerState::eviction_candidate() const {
  const std::set<std::uint64_t>* most = nullptr;
  for (const auto& [address, ids] : unproven) {
    if (!most || ids.size() > most->size() ||
        (ids.size() == most->size() && *ids.begin() < *most->begin())) {
      most = &ids;
    }
  }
  if (!most) return std::nullopt;
  return *most->begin();
}

std::shared_ptr<SessionBase> ServerState::release(std::uint64_t id) {
  const auto slot = sessions.find(id);
  if (slot == sessions.end()) return nullptr;
  const asio::ip::address client = slot->second.client;
  if (!slot->second.proven) {
    const auto own = unproven.find(client);
    own->second.erase(id);
    if (own->second.empty()) unproven.erase(own);
    --unproven_count;
  }
  auto session = slot->second.session.lock();
  sessions.erase(slot);
  const auto from_client = per_client.find(client);
  if (from_client != per_client.end() && --from_client->second == 0) per_client.erase(from_client);
  return session;
}

void ServerState::prove(std::uint64_t id) {
  std::lock_guard lock(mutex);
  const auto slot = sessions.find(id);
  if (slot == sessions.end() || slot->second.proven) return;  // evicted meanwhile
  slot->second.proven = true;
  const auto own = unproven.find(slot->second.client);
  own->second.erase(id);
  if (own->second.empty()) unproven.erase(own);
  --unproven_count;
}

void ServerState::refuse(tcp::socket socket, const std::string& why, const char* limit) {
  {
    std::lock_guard lock(mutex);
    if (refusals.note()) {
      spdlog::warn("refusing connections: {} ({} refused so far)", why, refusals.count());
    }
  }
  // Best effort, never waiting: the peer has most likely sent nothing yet, so it reads this 503
  // (a peer that already sent a request may see a reset instead).
  beast::error_code ignored;
  socket.non_blocking(true, ignored);
  if (!tls) {
    const std::string body =
        nlohmann::json{{"error", fmt::format("too many connections ({}); retry later", limit)}}
            .dump();
    const std::string answer = fmt::format(
        "HTTP/1.1 503 Service Unavailable\r\nServer: nmt-trackerd\r\nContent-Type: "
        "application/json\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: "
        "{}\r\n\r\n{}",
        body.size(), body);
    socket.send(asio::buffer(answer), 0, ignored);
  }
  socket.shutdown(tcp::socket::shutdown_both, ignored);
  socket.close(ignored);
}

void ServerState::forget(std::uint64_t id) {
  std::lock_guard lock(mutex);
  release(id);  // called by the session's destructor: its weak reference has already expired
}

void ServerState::stop_sessions() {
  std::vector<std::shared_ptr<SessionBase>> live;
  {
    std::lock_guard lock(mutex);
    stopping = true;
    for (const auto& [id, slot] : sessions) {
      if (auto session = slot.session.lock()) live.push_back(std::move(session));
    }
  }
  for (const auto& session : live) session->stop();
}

// Accepts connections on its own strand and gives each a session on a fresh strand.
class Listener : public std::enable_shared_from_this<Listener> {
 public:
  Listener(asio::io_context& io, std::shared_ptr<ServerState> state)
      : io_(io),
        acceptor_(asio::make_strand(io)),
        retry_(acceptor_.get_executor()),
        state_(std::move(state)) {
    listen();
  }

  unsigned short port() const { return acceptor_.local_endpoint().port(); }
  void start() {
    asio::dispatch(acceptor_.get_executor(), [self = shared_from_this()] { self->accept(); });
  }
  void stop() {
    asio::dispatch(acceptor_.get_executor(), [self = shared_from_this()] {
      self->stopped_ = true;
      beast::error_code ignored;
      self->acceptor_.close(ignored);
      self->retry_.cancel();
    });
  }

 private:
  void listen();
  void accept();
  void on_accept(beast::error_code ec, tcp::socket socket);

  asio::io_context& io_;
  tcp::acceptor acceptor_;
  asio::steady_timer retry_;
  std::shared_ptr<ServerState> state_;
  bool stopped_ = false;
};

void Listener::listen() {
  const auto& o = state_->options;
  const tcp::endpoint endpoint(asio::ip::make_address(o.bind_address), o.port);
  const auto deadline = std::chrono::steady_clock::now() + o.port_wait;
  beast::error_code ec;
  acceptor_.open(endpoint.protocol(), ec);
  // A restarted daemon must be able to take its port back while old connections sit in TIME_WAIT.
  if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  // A given port still listening: the daemon stopped just before this one has not closed it yet.
  const auto in_use = [&] { return ec == asio::error::address_in_use && o.port != 0; };
  if (in_use()) {
    spdlog::info("port {} is in use; waiting up to {} ms for it", o.port, o.port_wait.count());
  }
  while (in_use() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ec = {};
    acceptor_.bind(endpoint, ec);
  }
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    throw std::runtime_error("cannot listen on " + o.bind_address + ":" + std::to_string(o.port) +
                             ": " + ec.message());
  }
}

void Listener::accept() {
  acceptor_.async_accept(asio::make_strand(io_),
                         [self = shared_from_this()](beast::error_code ec, tcp::socket socket) {
                           self->on_accept(ec, std::move(socket));
                         });
}

void Listener::on_accept(beast::error_code ec, tcp::socket socket) {
  if (stopped_) return;
  if (ec) {
    spdlog::warn("accept failed: {}", ec.message());
    retry_.expires_after(kAcceptRetry);
    retry_.async_wait([self = shared_from_this()](beast::error_code wait_ec) {
      if (!wait_ec && !self->stopped_) self->accept();
    });
    return;
  }
  state_->start_session(std::move(socket), state_);
  accept();
}

}  // namespace detail

std::optional<std::size_t> fit_to_open_files(ServerOptions& options, std::uint64_t open_files) {
  const std::uint64_t room = open_files > 2 * kDescriptorsBesideConnections
                                 ? open_files - kDescriptorsBesideConnections
                                 : std::max<std::uint64_t>(open_files / 2, 1);
  if (options.max_connections <= room) return std::nullopt;
  const std::size_t before = options.max_connections;
  options.max_connections = static_cast<std::size_t>(room);
  return before;
}

HttpServer::HttpServer(asio::io_context& io, ServerOptions options, RequestCallback handler,
                       HeaderCallback check_header) {
  options.validate();
  auto tls = options.tls() ? make_tls_context(options) : nullptr;
  pool_ = std::make_unique<asio::thread_pool>(options.handler_threads);
  state_ = std::make_shared<detail::ServerState>(std::move(options), std::move(handler),
                                                 std::move(check_header), std::move(tls),
                                                 io.get_executor(), pool_->get_executor());
  listener_ = std::make_shared<detail::Listener>(io, state_);
  port_ = listener_->port();
  listener_->start();
}

HttpServer::~HttpServer() {
  stop();
  pool_->join();
}

void HttpServer::stop() {
  listener_->stop();
  state_->stop_sessions();
}

std::uint64_t HttpServer::requests_served() const {
  return state_->requests.load(std::memory_order_relaxed);
}

}  // namespace nmt::tracker
