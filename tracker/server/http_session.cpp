// A connection of the tracker's HTTP server: over TLS a handshake first, then read with deadlines
// and a body limit, answer on the handler pool, keep alive or close, linger after an error answer
// (see http_session.h).

#include "tracker/server/http_session.h"

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>
#include <nlohmann/json.hpp>

#include "tracker/server/request_target.h"

namespace nmt::tracker::detail {
namespace {

// After an error answer the client may still be sending the body we refused; closing with unread
// bytes makes the kernel send RST, which can destroy our answer in the client's receive buffer.
// So the session half-closes and reads (and drops) what still arrives, for a bounded time.
constexpr std::chrono::milliseconds kLingerTime{2000};
constexpr std::size_t kLingerBytes = 4u << 20;
// The first read of a request; the header parser reads on from there.
constexpr std::size_t kFirstRead = 4096;

std::string error_json(const std::string& message) {
  return nlohmann::json{{"error", message}}.dump();
}

std::string_view to_std(beast::string_view s) {
  return {s.data(), s.size()};
}

// Errors that only mean the peer went away or we closed it; nothing to answer.
bool is_disconnect(const beast::error_code& ec) {
  return ec == http::error::end_of_stream || ec == http::error::partial_message ||
         ec == asio::error::eof || ec == asio::error::connection_reset ||
         ec == asio::error::operation_aborted || ec == beast::error::timeout;
}

}  // namespace

template <class Stream>
void Session<Stream>::begin() {
  if constexpr (kTls) {
    // The handshake is bounded like a request header, and stop() closes a connection still in it
    // as it closes an idle one.
    waiting_ = true;
    tcp_stream().expires_after(state_->options.header_timeout);
    stream_.async_handshake(
        asio::ssl::stream_base::server,
        [self = this->shared_from_this()](beast::error_code ec) { self->on_handshake(ec); });
  } else {
    read_header();
  }
}

template <class Stream>
void Session<Stream>::on_handshake(beast::error_code ec) {
  waiting_ = false;
  if (stopping_) return;
  if (ec) return state_->note_handshake_failure(client_, ec);
  read_header();
}

// A file answer still being sent is cut off: it may be gigabytes, and its client takes a body
// short of its Content-Length as the failure it is.
template <class Stream>
void Session<Stream>::on_stop() {
  stopping_ = true;
  if (waiting_) tcp_stream().cancel();
  if (file_) tcp_stream().close();
}

// Its slot is already free; whatever is pending fails on the closed socket and the session ends.
template <class Stream>
void Session<Stream>::on_evict() {
  spdlog::debug("connection {} from {}: closed to make room (no request with the token yet)", id_,
                client_.to_string());
  stopping_ = true;
  tcp_stream().close();
}

// Splitting the idle wait from the header read lets a keep-alive connection sit idle longer than
// a client may take over one header; a pipelined request already in the buffer needs no wait.
template <class Stream>
void Session<Stream>::wait_for_request() {
  if (stopping_) return;  // stop() came while the last answer was being written
  waiting_ = true;
  if (buffer_.size() > 0) return read_header();
  tcp_stream().expires_after(state_->options.idle_timeout);
  stream_.async_read_some(buffer_.prepare(kFirstRead),
                          [self = this->shared_from_this()](beast::error_code ec, std::size_t n) {
                            self->on_first_bytes(ec, n);
                          });
}

template <class Stream>
void Session<Stream>::on_first_bytes(beast::error_code ec, std::size_t n) {
  if (ec) {
    waiting_ = false;
    if (ec == beast::error::timeout) {
      spdlog::debug("connection {}: idle for {} ms, closed", id_,
                    state_->options.idle_timeout.count());
    }
    return on_read_error(ec);
  }
  buffer_.commit(n);
  read_header();
}

template <class Stream>
void Session<Stream>::read_header() {
  const auto& o = state_->options;
  parser_.emplace();
  parser_->body_limit(o.body_limit);
  // One deadline for header and body together, from the first byte: a client trickling bytes
  // cannot extend it. The header has its own, shorter one.
  deadline_ = std::chrono::steady_clock::now() + o.read_timeout;
  tcp_stream().expires_after(std::min(o.header_timeout, o.read_timeout));
  http::async_read_header(stream_, buffer_, *parser_,
                          [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                            self->on_header(ec);
                          });
}

template <class Stream>
void Session<Stream>::on_header(beast::error_code ec) {
  waiting_ = false;
  if (ec) return on_read_error(ec);
  started_ = std::chrono::steady_clock::now();
  if (!admit_header()) return;
  const auto& header = parser_->get();
  // curl and others wait up to a second for this before sending a large body.
  if (beast::iequals(header[http::field::expect], "100-continue")) {
    continue_ = http::response<http::empty_body>(http::status::continue_, version_);
    http::async_write(stream_, continue_,
                      [self = this->shared_from_this()](beast::error_code wec, std::size_t) {
                        if (!wec) self->read_body();
                      });
    return;
  }
  read_body();
}

// The request as far as the header tells it, checked before a byte of the body is read. False
// when it was refused (the refusal is on its way and the connection will close).
template <class Stream>
bool Session<Stream>::admit_header() {
  const auto& header = parser_->get();
  version_ = header.version();
  keep_alive_ = header.keep_alive();
  summary_ = std::string(header.method_string()) + " " + std::string(header.target());
  request_ = Request{};
  try {
    parse_target(to_std(header.target()), request_);
  } catch (const std::invalid_argument& e) {
    reject(http::status::bad_request, e.what());
    return false;
  }
  request_.method = std::string(header.method_string());
  request_.authorization = std::string(header[http::field::authorization]);
  request_.cookie = std::string(header[http::field::cookie]);
  HeaderCheck check;
  check.proven = true;  // without a header check, every complete header proves its connection
  if (state_->check_header) check = state_->check_header(request_);
  if (check.proven && !proven_) {
    proven_ = true;
    state_->prove(id_);
  }
  if (check.refusal) {
    spdlog::debug("connection {}: {} refused from its header ({})", id_, summary_,
                  check.refusal->status);
    send(std::move(*check.refusal), true, true);
    return false;
  }
  return true;
}

template <class Stream>
void Session<Stream>::read_body() {
  tcp_stream().expires_at(deadline_);
  http::async_read(
      stream_, buffer_, *parser_,
      [self = this->shared_from_this()](beast::error_code ec, std::size_t) { self->on_body(ec); });
}

template <class Stream>
void Session<Stream>::on_read_error(beast::error_code ec) {
  if (ec == http::error::body_limit) {
    return reject(http::status::payload_too_large, "request body exceeds the limit of " +
                                                       std::to_string(state_->options.body_limit) +
                                                       " bytes");
  }
  if (ec == http::error::header_limit) {
    return reject(http::status::request_header_fields_too_large, "request header too large");
  }
  if (!is_disconnect(ec) &&
      ec.category() == http::make_error_code(http::error::bad_method).category()) {
    return reject(http::status::bad_request, "malformed HTTP request: " + ec.message());
  }
  spdlog::debug("connection {} closed while reading: {}", id_, ec.message());
}

template <class Stream>
void Session<Stream>::on_body(beast::error_code ec) {
  if (ec) return on_read_error(ec);
  request_.body = std::move(parser_->get().body());
  parser_.reset();
  call_handler(std::move(request_));
}

template <class Stream>
void Session<Stream>::call_handler(Request request) {
  // The guard keeps io_context::run() from returning while the handler works on a pool thread.
  auto guard = asio::make_work_guard(state_->io_executor);
  asio::post(state_->handler_executor,
             [self = this->shared_from_this(), request = std::move(request),
              guard = std::move(guard)]() mutable {
               bool failed = false;
               Response response = self->state_->call_handler(request, failed);
               asio::post(self->stream_.get_executor(),
                          [self, response = std::move(response), failed]() mutable {
                            self->answer(std::move(response), failed);
                          });
             });
}

template <class Stream>
void Session<Stream>::answer(Response response, bool failed) {
  ++served_;
  state_->requests.fetch_add(1, std::memory_order_relaxed);
  const auto ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started_)
          .count();
  spdlog::debug("{} -> {} ({:.1f} ms)", summary_, response.status, ms);
  const bool close =
      failed || stopping_ || !keep_alive_ || served_ >= state_->options.keepalive_max_requests;
  send(std::move(response), close, false);
}

template <class Stream>
void Session<Stream>::reject(http::status status, const std::string& message) {
  spdlog::debug("connection {}: answering {} ({})", id_, static_cast<int>(status), message);
  Response response;
  response.status = static_cast<int>(status);
  response.body = error_json(message);
  send(std::move(response), true, true);
}

template <class Stream>
void Session<Stream>::send(Response response, bool close, bool linger) {
  if (response.body_file) return send_file(std::move(response), close);
  const bool valid_status = response.status >= 100 && response.status <= 999;
  response_ =
      http::response<http::string_body>(valid_status ? static_cast<http::status>(response.status)
                                                     : http::status::internal_server_error,
                                        version_);
  response_.set(http::field::server, "nmt-trackerd");
  response_.set(http::field::content_type, response.content_type);
  for (const auto& [name, value] : response.headers) {
    response_.insert(name, value);
  }
  response_.keep_alive(!close);
  response_.body() = std::move(response.body);
  response_.prepare_payload();
  tcp_stream().expires_after(state_->options.write_timeout);
  http::async_write(stream_, response_,
                    [self = this->shared_from_this(), close, linger](
                        beast::error_code ec, std::size_t) { self->on_write(ec, close, linger); });
}

template <class Stream>
void Session<Stream>::on_write(beast::error_code ec, bool close, bool linger) {
  if (ec) {
    spdlog::debug("connection {} closed while writing: {}", id_, ec.message());
    return;
  }
  if (!close) return wait_for_request();
  finish(linger);
}

// Over TLS the close_notify goes first, and waiting for the client's own (OpenSSL drops what else
// arrives meanwhile) is the linger, bounded by the same time; over HTTP a half-close, then the
// drain when lingering.
template <class Stream>
void Session<Stream>::finish(bool linger) {
  const auto linger_time = std::min(kLingerTime, state_->options.read_timeout);
  if constexpr (kTls) {
    tcp_stream().expires_after(linger_time);
    stream_.async_shutdown([self = this->shared_from_this()](beast::error_code) {
      beast::error_code ignored;
      self->tcp_stream().socket().shutdown(tcp::socket::shutdown_both, ignored);
    });
  } else {
    beast::error_code ignored;
    tcp_stream().socket().shutdown(tcp::socket::shutdown_send, ignored);
    if (linger) {
      tcp_stream().expires_after(linger_time);
      drain();
    }
  }
}

template <class Stream>
void Session<Stream>::drain() {
  // No expires_after here: the linger deadline set once in finish() bounds all of these reads.
  buffer_.consume(buffer_.size());
  tcp_stream().async_read_some(
      buffer_.prepare(64 * 1024),
      [self = this->shared_from_this()](beast::error_code ec, std::size_t n) {
        self->drained_ += n;
        if (!ec && self->drained_ < kLingerBytes) self->drain();
      });
}

void ServerState::note_handshake_failure(const asio::ip::address& client,
                                         const beast::error_code& ec) {
  std::lock_guard lock(mutex);
  if (failed_handshakes.note()) {
    spdlog::warn(
        "TLS handshake with {} failed: {} ({} so far; a plain-HTTP client, or one that does not "
        "trust this certificate?)",
        client.to_string(), ec.message(), failed_handshakes.count());
  }
}

Response ServerState::call_handler(const Request& request, bool& failed) const {
  try {
    return handler(request);
  } catch (const std::exception& e) {
    spdlog::error("request handler failed on {} {}: {}", request.method, request.path, e.what());
  } catch (...) {
    spdlog::error("request handler failed on {} {}: unknown exception", request.method,
                  request.path);
  }
  failed = true;
  Response response;
  response.status = 500;
  response.body = error_json("internal error");
  return response;
}

template class Session<PlainStream>;
template class Session<TlsStream>;

}  // namespace nmt::tracker::detail
