#pragma once
// Internal to the tracker's HTTP server: one Session per connection and the ServerState that the
// listener and every session share (its admission of connections is in http_server.cpp). Only
// http_server.cpp and http_session.cpp include this. A session is a template over its stream:
// beast::tcp_stream (HTTP) or an ssl_stream over one (HTTPS); both are instantiated in
// http_session.cpp, and the code differs only where TLS does (the handshake, the close_notify).

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
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "tracker/server/http_server.h"
#include "tracker/server/log_throttle.h"

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
  // Answer the request being handled, if any, then close; close at once when idle or while sending
  // a file answer (a backup may be gigabytes).
  virtual void stop() = 0;
  // Close at once, whatever the session is doing: it made room for a newcomer.
  virtual void evict() = 0;
};

// What the server state keeps of one open session.
struct SessionSlot {
  std::weak_ptr<SessionBase> session;
  asio::ip::address client;
  bool proven = false;  // a request with the token has been read on it
};

// What the listener and every session share. Sessions register here so that stop() can reach the
// idle ones, and are counted in all, per client address and while unproven, for the caps: a
// newcomer that finds the connection cap or the unproven share full closes an unproven session
// (evict()) to take its slot, or is refused when proven ones hold the cap; one that finds its
// address's cap full is refused.
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
  // The session read a request with the token: it may now hold any slot and is never evicted.
  void prove(std::uint64_t id);
  // The session is gone; nothing when it was evicted (its slot was freed then).
  void forget(std::uint64_t id);
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
  std::map<std::uint64_t, SessionSlot> sessions;        // by id: oldest first
  std::map<asio::ip::address, std::size_t> per_client;  // open sessions by client address
  // The ids of the unproven sessions of each client address, oldest first; no empty sets.
  std::map<asio::ip::address, std::set<std::uint64_t>> unproven;
  std::size_t unproven_count = 0;
  LogThrottle refusals;           // connections refused
  LogThrottle evictions;          // unproven sessions closed for newcomers
  LogThrottle failed_handshakes;  // TLS handshakes that failed

 private:
  // Over a cap: a 503 naming the flag of the cap, `limit` (HTTP; over TLS the connection just
  // closes: answering would cost the handshake the cap is there to save) and close, without a
  // session. Called without the mutex.
  void refuse(tcp::socket socket, const std::string& why, const char* limit);
  // With the mutex held: room for a newcomer from `client`, made by freeing the slot of an unproven
  // session when the cap or the unproven share is full. Returns that session, to evict (null when
  // there was room, or when it is already closing), and sets `why` and `limit` (the flag of the cap
  // that is full) when there is no room.
  std::shared_ptr<SessionBase> make_room(const asio::ip::address& client, std::string& why,
                                         const char*& limit);
  // With the mutex held: the id of the session to evict: the oldest unproven one of the address
  // holding the most (on a tie, the address holding the oldest); nullopt when none is unproven.
  std::optional<std::uint64_t> eviction_candidate() const;
  // With the mutex held: frees the slot of session `id` and returns the session, if still alive.
  std::shared_ptr<SessionBase> release(std::uint64_t id);
};

// One connection: over TLS, the handshake first (header_timeout); then wait for a request's first
// byte (idle_timeout), read its header (header_timeout), check it (a header with the token proves
// the connection), read its body (read_timeout from the first byte), hand it to the handler pool,
// write the answer, repeat while keep-alive holds. Every step runs on the session's strand; any
// error ends this session alone.
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
  ~Session() override { state_->forget(id_); }

  void start() override {
    asio::dispatch(stream_.get_executor(), [self = this->shared_from_this()] { self->begin(); });
  }
  void stop() override {
    asio::dispatch(stream_.get_executor(), [self = this->shared_from_this()] { self->on_stop(); });
  }
  void evict() override {
    asio::dispatch(stream_.get_executor(), [self = this->shared_from_this()] { self->on_evict(); });
  }

 private:
  beast::tcp_stream& tcp_stream() { return beast::get_lowest_layer(stream_); }
  void begin();
  void on_handshake(beast::error_code ec);
  void on_stop();
  void on_evict();
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
  void send_file(Response response, bool close);
  void read_file_piece(bool close);
  void write_file_piece(std::int64_t got, int error, bool close);
  void on_write(beast::error_code ec, bool close, bool linger);
  void finish(bool linger);
  void drain();

  Stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::empty_body> continue_;
  http::response<http::string_body> response_;
  // An answer whose body is a file (Response::body_file), on its way a piece at a time: each piece
  // is read on the handler pool (a disk read never stalls the I/O thread) and written within
  // write_timeout, so a body of any size is bounded by its progress, not by one deadline.
  struct FileAnswer {
    std::shared_ptr<const BodyFile> source;
    http::response<http::buffer_body> message;
    std::optional<http::response_serializer<http::buffer_body>> serializer;
    std::uint64_t size = 0;  // of the body
    std::vector<char> piece;
    std::uint64_t sent = 0;
  };
  std::unique_ptr<FileAnswer> file_;  // while one is being sent
  std::shared_ptr<ServerState> state_;
  const std::uint64_t id_;
  const asio::ip::address client_;
  Request request_;                                 // filled from the header, then the body
  std::chrono::steady_clock::time_point deadline_;  // of the whole request being read
  unsigned served_ = 0;
  bool waiting_ = false;   // waiting for the next request's header: safe to close on stop
  bool stopping_ = false;  // answer the current request, then close
  bool proven_ = false;    // a request with the token has been read on this connection
  bool keep_alive_ = true;
  unsigned version_ = 11;
  std::string summary_;  // "METHOD target" for debug logs
  std::chrono::steady_clock::time_point started_;
  std::size_t drained_ = 0;
};

// Defined in http_session.cpp; ServerState::start_session (http_server.cpp) makes them.
extern template class Session<PlainStream>;
extern template class Session<TlsStream>;

}  // namespace nmt::tracker::detail
