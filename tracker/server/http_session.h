#pragma once
// Internal to the tracker's HTTP server: one Session per connection and the ServerState that the
// listener and every session share. Only http_server.cpp and http_session.cpp include this. A
// session is a template over its stream: beast::tcp_stream (HTTP) or an ssl_stream over one
// (HTTPS); both are instantiated in http_session.cpp, and the code differs only where TLS does (the
// handshake, the close_notify).

#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>

#include "tracker/server/http_server.h"

namespace nmt::tracker::detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// What the server state keeps of a session, whatever its stream.
class SessionBase {
 public:
  virtual ~SessionBase() = default;
  virtual void start() = 0;
  // Answer the request being handled, if any, then close; close at once when idle.
  virtual void stop() = 0;
};

// What the listener and every session share. Sessions register here so that stop() can reach the
// idle ones, and are counted per client address for the per-client cap.
struct ServerState {
  ServerState(ServerOptions o, RequestCallback h, HeaderCallback c,
              std::shared_ptr<asio::ssl::context> t, asio::io_context::executor_type io,
              asio::thread_pool::executor_type pool)
      : options(std::move(o)),
        handler(std::move(h)),
        check_header(std::move(c)),
        tls(std::move(t)),
        io_executor(io),
        handler_executor(pool) {}

  void start_session(tcp::socket socket, const std::shared_ptr<ServerState>& self);
  void forget(std::uint64_t id, const asio::ip::address& client);
  void stop_sessions();
  Response call_handler(const Request& request, bool& failed) const;
  // A TLS handshake that failed (plain HTTP, a client that does not trust the certificate):
  // logged at most once a second, with a count.
  void note_handshake_failure(const asio::ip::address& client, const beast::error_code& ec);

  const ServerOptions options;
  const RequestCallback handler;
  const HeaderCallback check_header;
  const std::shared_ptr<asio::ssl::context> tls;  // null: plain HTTP
  const asio::io_context::executor_type io_executor;
  const asio::thread_pool::executor_type handler_executor;
  std::atomic<std::uint64_t> requests{0};

  std::mutex mutex;  // guards the members below
  bool stopping = false;
  std::uint64_t next_id = 0;
  std::unordered_map<std::uint64_t, std::weak_ptr<SessionBase>> sessions;
  std::map<asio::ip::address, std::size_t> per_client;   // open sessions by client address
  std::uint64_t refused = 0;                             // connections refused, for the log
  std::chrono::steady_clock::time_point refusal_logged;  // refusals are logged once a second
  std::uint64_t failed_handshakes = 0;
  std::chrono::steady_clock::time_point handshake_failure_logged;

 private:
  // Over a cap: a fixed 503 (HTTP; over TLS the connection just closes: answering would cost the
  // handshake the cap is there to save) and close, without a session. Called without the mutex.
  void refuse(tcp::socket socket, const std::string& why);
};

// One connection: over TLS, the handshake first (header_timeout); then wait for a request's first
// byte (idle_timeout), read its header (header_timeout), check it, read its body (read_timeout
// from the first byte), hand it to the handler pool, write the answer, repeat while keep-alive
// holds. Every step runs on the session's strand; any error ends this session alone.
template <class Stream>
class Session : public SessionBase, public std::enable_shared_from_this<Session<Stream>> {
 public:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

  // `stream_args`: the socket, and for TLS the context.
  template <class... StreamArgs>
  Session(std::shared_ptr<ServerState> state, std::uint64_t id, asio::ip::address client,
          StreamArgs&&... stream_args)
      : stream_(std::forward<StreamArgs>(stream_args)...),
        state_(std::move(state)),
        id_(id),
        client_(client) {
    // Answers are small and latency-bound; Nagle would hold a split write for a delayed ACK.
    beast::error_code ignored;
    tcp_stream().socket().set_option(tcp::no_delay(true), ignored);
  }
  ~Session() override { state_->forget(id_, client_); }

  void start() override {
    asio::dispatch(stream_.get_executor(), [self = this->shared_from_this()] { self->begin(); });
  }
  void stop() override {
    asio::dispatch(stream_.get_executor(), [self = this->shared_from_this()] { self->on_stop(); });
  }

 private:
  beast::tcp_stream& tcp_stream() { return beast::get_lowest_layer(stream_); }
  void begin();
  void on_handshake(beast::error_code ec);
  void on_stop();
  void wait_for_request();
  void on_first_bytes(beast::error_code ec, std::size_t n);
  void read_header();
  void on_header(beast::error_code ec);
  bool admit_header();
  void read_body();
  void on_body(beast::error_code ec);
  void on_read_error(beast::error_code ec);
  void call_handler(Request request);
  void answer(Response response, bool failed);
  void reject(http::status status, const std::string& message);
  void send(Response response, bool close, bool linger);
  void on_write(beast::error_code ec, bool close, bool linger);
  void finish(bool linger);
  void drain();

  Stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::empty_body> continue_;
  http::response<http::string_body> response_;
  std::shared_ptr<ServerState> state_;
  const std::uint64_t id_;
  const asio::ip::address client_;
  Request request_;                                 // filled from the header, then the body
  std::chrono::steady_clock::time_point deadline_;  // of the whole request being read
  unsigned served_ = 0;
  bool waiting_ = false;   // waiting for the next request's header: safe to close on stop
  bool stopping_ = false;  // answer the current request, then close
  bool keep_alive_ = true;
  unsigned version_ = 11;
  std::string summary_;  // "METHOD target" for debug logs
  std::chrono::steady_clock::time_point started_;
  std::size_t drained_ = 0;
};

}  // namespace nmt::tracker::detail
