#pragma once
// The tracker daemon's HTTP/1.1 front: a listener that accepts (within a connection cap and a cap
// per client address), one session per connection that reads with deadlines and a body limit, and
// a request handler (a plain function of Request) that never sees a socket. A header check, also a
// plain function of Request, runs before any body is read, so a request it refuses (a missing
// token) never has its body buffered; it also says whether the request carries the token, which
// makes its connection proven. Connections not proven yet may hold only part of the cap, and when
// a newcomer finds no room under it, the oldest unproven connection of the address holding the
// most of them is closed to make it: clients without the token, from any number of addresses, can
// take neither the slots of proven connections nor a newcomer's chance to send its header
// (tracker/API.md, "Limits and fairness"). Each client address has a cap of its own besides.
// Handler calls run on their own small thread pool, so a store commit that takes a while never
// stalls accepting, reading or timing out other connections. With a certificate and key
// (ServerOptions::tls_cert_file, tls_key_file) every connection is TLS (OpenSSL through Beast's
// ssl_stream) under the same limits; a client that does not complete the TLS handshake within
// header_timeout is closed without an answer, so plain HTTP gets none.

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "tracker/api/http_types.h"

namespace nmt::tracker {

namespace detail {
struct ServerState;
class Listener;
}  // namespace detail

struct ServerOptions {
  std::string bind_address = "127.0.0.1";  // an IP literal; loopback keeps the daemon private
  unsigned short port = 0;                 // 0: the kernel picks a free port (see port())
  std::size_t body_limit = 16u << 20;      // larger request bodies are answered 413 while reading
  std::chrono::milliseconds idle_timeout{30'000};    // waiting for a request's first byte
  std::chrono::milliseconds header_timeout{10'000};  // first byte to the end of the header
  std::chrono::milliseconds read_timeout{30'000};    // first byte to the end of the body
  std::chrono::milliseconds write_timeout{30'000};   // whole response
  unsigned keepalive_max_requests = 1000;  // requests on one connection before it is closed
  // Open connections in all; past it: 503 and close. A rank of a training job holds one, so this
  // is four jobs of 128 nodes with 8 ranks each. Each is a descriptor: see fit_to_open_files().
  std::size_t max_connections = 4096;
  std::size_t max_connections_per_client = 64;  // open connections per client IP; past it: 503
  // Slots only proven connections may hold (a request with the token read on them; with no token,
  // any complete request header): unproven ones hold at most max_connections minus this. Unset: a
  // quarter of max_connections. Below max_connections.
  std::optional<std::size_t> reserved_connections;
  unsigned handler_threads = 1;  // threads calling the handler; 1 serialises calls to it
  std::string tls_cert_file;     // PEM certificate chain; set with tls_key_file: HTTPS only
  std::string tls_key_file;      // PEM private key of the certificate's first entry
  // A given port still held by another socket (a daemon of it that is closing) is tried again for
  // this long before the start fails.
  std::chrono::milliseconds port_wait{10'000};

  bool tls() const { return !tls_cert_file.empty(); }
  // The most connections that may be open without having proven themselves.
  std::size_t unproven_limit() const {
    return max_connections - reserved_connections.value_or(max_connections / 4);
  }

  // Throws std::invalid_argument naming the first bad field.
  void validate() const;
};

// The descriptors a server holds besides its connections' sockets (the listener, the event loop,
// database files and their journals, logs, a connection being refused), with room to spare.
inline constexpr std::size_t kDescriptorsBesideConnections = 64;

// Lowers options.max_connections to what `open_files` descriptors leave room for (at least half
// of them go to connections), so that a connection past it is answered 503 instead of waiting
// in the kernel's queue while accept fails for want of a descriptor. Returns the cap it had when
// it lowered it.
std::optional<std::size_t> fit_to_open_files(ServerOptions& options, std::uint64_t open_files);

using RequestCallback = std::function<Response(const Request&)>;
// Sees a request with its line and headers but no body yet; a refusal is sent, and the connection
// closed, without reading the body; `proven` marks the connection proven. Called on I/O threads:
// keep it quick. Without one, every complete request header proves its connection.
using HeaderCallback = std::function<HeaderCheck(const Request&)>;

// Must outlive every run() of the io_context it was given. The handler may be called from
// `handler_threads` threads at once; an exception escaping it is answered 500 and closes that
// connection only.
class HttpServer {
 public:
  // Loads the TLS certificate and key when given (throws std::runtime_error naming the file that
  // fails), binds and listens at once (throws std::runtime_error naming the address when that
  // fails), then accepts on `io` as soon as the caller runs it. `check_header` may be empty.
  HttpServer(boost::asio::io_context& io, ServerOptions options, RequestCallback handler,
             HeaderCallback check_header = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  unsigned short port() const { return port_; }

  // Stops accepting and closes connections whose next request header has not fully arrived (an
  // idle keep-alive client must not hold up a shutdown), and those sending a file answer (a
  // backup); requests already read are handled and answered, then their connections close. The
  // io_context then runs out of work. Thread-safe.
  void stop();

  // Requests answered so far (for the shutdown log line).
  std::uint64_t requests_served() const;

 private:
  // The pool is owned here, not by the shared state that sessions keep alive, so that the last
  // session reference dropped on a pool thread never makes that thread join itself.
  std::unique_ptr<boost::asio::thread_pool> pool_;
  std::shared_ptr<detail::ServerState> state_;
  std::shared_ptr<detail::Listener> listener_;
  unsigned short port_ = 0;
};

}  // namespace nmt::tracker
