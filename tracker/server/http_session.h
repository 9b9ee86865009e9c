#pragma once
// Internal to the tracker's HTTP server: one Session per connection and the ServerState that the
// listener and every session share. Only http_server.cpp and http_session.cpp include this.

#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "tracker/server/http_server.h"

namespace nmt::tracker::detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

class Session;

// What the listener and every session share. Sessions register here so that stop() can reach the
// idle ones.
struct ServerState {
  ServerState(ServerOptions o, RequestCallback h, asio::io_context::executor_type io,
              asio::thread_pool::executor_type pool)
      : options(std::move(o)), handler(std::move(h)), io_executor(io), handler_executor(pool) {}

  void start_session(tcp::socket socket, const std::shared_ptr<ServerState>& self);
  void forget(std::uint64_t id);
  void stop_sessions();
  Response call_handler(const Request& request, bool& failed) const;

  const ServerOptions options;
  const RequestCallback handler;
  const asio::io_context::executor_type io_executor;
  const asio::thread_pool::executor_type handler_executor;
  std::atomic<std::uint64_t> requests{0};

  std::mutex mutex;  // guards the three below
  bool stopping = false;
  std::uint64_t next_id = 0;
  std::unordered_map<std::uint64_t, std::weak_ptr<Session>> sessions;
};

// One connection: read a request (header, then body, all within read_timeout), hand it to the
// handler pool, write the answer, repeat while keep-alive holds. Every step runs on the session's
// strand; any error ends this session alone.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, std::shared_ptr<ServerState> state, std::uint64_t id)
      : stream_(std::move(socket)), state_(std::move(state)), id_(id) {
    // Answers are small and latency-bound; Nagle would hold a split write for a delayed ACK.
    beast::error_code ignored;
    stream_.socket().set_option(tcp::no_delay(true), ignored);
  }
  ~Session() { state_->forget(id_); }

  void start() {
    asio::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->read_header(); });
  }
  void stop() {
    asio::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->on_stop(); });
  }

 private:
  void on_stop();
  void read_header();
  void on_header(beast::error_code ec);
  void read_body();
  void on_body(beast::error_code ec);
  void on_read_error(beast::error_code ec);
  void call_handler(Request request);
  void answer(Response response, bool failed);
  void reject(http::status status, const std::string& message);
  void send(Response response, bool close, bool linger);
  void on_write(beast::error_code ec, bool close, bool linger);
  void drain();

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::empty_body> continue_;
  http::response<http::string_body> response_;
  std::shared_ptr<ServerState> state_;
  const std::uint64_t id_;
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
