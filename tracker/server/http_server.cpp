#include "tracker/server/http_server.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <cerrno>
#include <fstream>
#include <stdexcept>
#include <system_error>

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
  beast::error_code ec;
  acceptor_.open(endpoint.protocol(), ec);
  // A restarted daemon must be able to take its port back while old connections sit in TIME_WAIT.
  if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
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
