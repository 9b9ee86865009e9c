#include "tracker/client/http_client.h"

#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <vector>

#include "tracker/api/routes.h"

namespace nmt::tracker {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

namespace {

// The longest answer we accept: the full metric series of a long run.
constexpr std::uint64_t kMaxResponseBytes = std::uint64_t{1} << 30;
// The piece of a streamed answer's body read at a time (HttpClient::get_streamed).
constexpr std::size_t kStreamPiece = 256 * 1024;

using Request = http::request<http::string_body>;

[[noreturn]] void bad_url(const std::string& text, const std::string& why) {
  throw std::invalid_argument("bad tracker URL '" + text + "': " + why +
                              " (expected http://host:port or https://host:port, e.g. "
                              "http://127.0.0.1:6006)");
}

bool is_port(const std::string& port) {
  if (port.empty() || port.size() > 5) return false;
  for (const char c : port) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  const int value = std::stoi(port);
  return value > 0 && value < 65536;
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

bool is_ip_address(const std::string& host) {
  beast::error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

// A daemon that closed an idle keep-alive connection shows up as one of these on the next request
// over it. Sending again on a fresh connection is then right; the rare case where the daemon did
// process the request and died before answering is the lost response that the metrics endpoint
// dedupes by sequence number.
bool is_stale_connection(const beast::error_code& ec) {
  return ec == http::error::end_of_stream || ec == asio::error::eof ||
         ec == asio::error::connection_reset || ec == asio::error::broken_pipe ||
         ec == ssl::error::stream_truncated;
}

}  // namespace

std::string Url::authority() const {
  return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + port;
}

Url parse_url(const std::string& text) {
  std::string rest = text;
  Url url;
  const auto scheme_end = rest.find("://");
  if (scheme_end != std::string::npos) {
    url.scheme = lower(rest.substr(0, scheme_end));
    if (url.scheme != "http" && url.scheme != "https") {
      bad_url(text, "the scheme must be http or https");
    }
    rest.erase(0, scheme_end + 3);
  }
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  if (rest.empty()) bad_url(text, "no host");
  std::size_t host_end = 0;
  if (rest.front() == '[') {  // an IPv6 literal
    host_end = rest.find(']');
    if (host_end == std::string::npos) bad_url(text, "unclosed '['");
    url.host = rest.substr(1, host_end - 1);
    ++host_end;
  } else {
    host_end = std::min(rest.find(':'), rest.size());
    url.host = rest.substr(0, host_end);
  }
  const std::string tail = rest.substr(host_end);
  if (url.host.empty() || url.host.find('/') != std::string::npos) bad_url(text, "bad host");
  if (tail.empty()) {
    url.port = url.tls() ? "443" : "80";
  } else if (tail.front() != ':' || !is_port(tail.substr(1))) {
    bad_url(text, "the port must be a number from 1 to 65535, with no path after it");
  } else {
    url.port = tail.substr(1);
  }
  return url;
}

std::string url_encode(const std::string& text) {
  return api::percent_encode(text);
}

// What every https connection of one client shares: TLS 1.2 or later, the peer verified against
// the CA file or the system's CAs.
struct HttpClient::TlsContext {
  explicit TlsContext(const std::string& ca_file) {
    context.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                        ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
    context.set_verify_mode(ssl::verify_peer);
    beast::error_code ec;
    if (ca_file.empty()) {
      context.set_default_verify_paths(ec);
      if (ec) {
        throw std::invalid_argument("cannot load the system's CA certificates (" + ec.message() +
                                    "); name a CA file");
      }
      return;
    }
    if (!std::ifstream(ca_file)) throw std::invalid_argument("cannot read the CA file " + ca_file);
    context.load_verify_file(ca_file, ec);
    if (ec) {
      throw std::invalid_argument("the CA file " + ca_file +
                                  " holds no usable PEM certificate: " + ec.message());
    }
  }

  ssl::context context{ssl::context::tls_client};
};

// One connection (TCP, or TLS over TCP) and the io_context that drives it. Every operation is
// asynchronous under the hood only so that beast::tcp_stream's expiry can bound it; run() waits
// for it to finish. A TLS session is never reused: each connection gets a fresh stream.
struct HttpClient::Connection {
  asio::io_context ioc;
  std::optional<beast::tcp_stream> plain;
  std::optional<beast::ssl_stream<beast::tcp_stream>> secure;
  beast::flat_buffer buffer;
  bool open = false;

  beast::tcp_stream& tcp() { return secure ? beast::get_lowest_layer(*secure) : *plain; }

  template <class Start>
  beast::error_code run(Start start) {
    beast::error_code result = asio::error::would_block;
    start([&result](beast::error_code ec, auto&&...) { result = ec; });
    ioc.restart();
    ioc.run();
    return result;
  }

  // Throws TlsError when the TCP connection opened but the TLS handshake failed. `local`: the
  // address to connect from; empty: any.
  beast::error_code connect(const Url& url, TlsContext* tls, std::chrono::milliseconds timeout,
                            const std::string& local) {
    beast::error_code ec;
    tcp::resolver resolver(ioc);
    const auto endpoints = resolver.resolve(url.host, url.port, ec);
    if (ec) return ec;
    plain.reset();
    secure.reset();
    if (tls) {
      secure.emplace(ioc, tls->context);
    } else {
      plain.emplace(ioc);
    }
    tcp().expires_after(timeout);
    if (local.empty()) {
      ec = run([&](auto handler) { tcp().async_connect(endpoints, handler); });
    } else {
      ec = connect_from(asio::ip::make_address(local), endpoints);
    }
    if (!ec && tls) handshake(url, timeout);
    open = !ec;
    return ec;
  }

  // Tries the endpoints of `local`'s family in turn from a socket bound to it.
  beast::error_code connect_from(const asio::ip::address& local,
                                 const tcp::resolver::results_type& endpoints) {
    beast::error_code ec = asio::error::address_family_not_supported;
    for (const auto& entry : endpoints) {
      const tcp::endpoint remote = entry.endpoint();
      if (remote.address().is_v4() != local.is_v4()) continue;
      auto& socket = tcp().socket();
      beast::error_code ignored;
      socket.close(ignored);
      ec = {};
      socket.open(remote.protocol(), ec);
      if (!ec) socket.bind(tcp::endpoint(local, 0), ec);
      if (!ec) ec = run([&](auto handler) { tcp().async_connect(remote, handler); });
      if (!ec) return ec;
    }
    return ec;
  }

  void handshake(const Url& url, std::chrono::milliseconds timeout) {
    SSL* session = secure->native_handle();
    // The certificate must name the host of the URL: its IP address, or its DNS name (also sent
    // as SNI).
    X509_VERIFY_PARAM* verify = SSL_get0_param(session);
    if (is_ip_address(url.host)) {
      X509_VERIFY_PARAM_set1_ip_asc(verify, url.host.c_str());
    } else {
      X509_VERIFY_PARAM_set_hostflags(verify, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
      X509_VERIFY_PARAM_set1_host(verify, url.host.c_str(), 0);
      SSL_set_tlsext_host_name(session, url.host.c_str());
    }
    tcp().expires_after(timeout);
    const beast::error_code ec =
        run([&](auto handler) { secure->async_handshake(ssl::stream_base::client, handler); });
    if (!ec) return;
    const long verified = SSL_get_verify_result(session);
    std::string reason = ec.message();
    if (verified != X509_V_OK) {
      reason =
          std::string("its certificate did not verify: ") + X509_verify_cert_error_string(verified);
    } else if (ec.category() == asio::error::get_ssl_category() &&
               ERR_GET_REASON(static_cast<unsigned long>(ec.value())) ==
                   SSL_R_WRONG_VERSION_NUMBER) {
      reason += " (does the daemon serve plain HTTP? then use http://)";
    }
    shut();
    throw TlsError(fmt::format("TLS handshake with {} failed: {}", url.to_string(), reason));
  }

  template <class Stream>
  std::optional<HttpResponse> exchange_on(Stream& stream, const Request& request,
                                          std::chrono::milliseconds timeout,
                                          beast::error_code& ec) {
    tcp().expires_after(timeout);
    ec = run([&](auto handler) { http::async_write(stream, request, handler); });
    if (ec) return std::nullopt;
    http::response_parser<http::string_body> parser;
    parser.body_limit(kMaxResponseBytes);
    tcp().expires_after(timeout);
    ec = run([&](auto handler) { http::async_read(stream, buffer, parser, handler); });
    if (ec) return std::nullopt;
    auto& response = parser.get();
    if (!response.keep_alive()) shut();
    return HttpResponse{static_cast<int>(response.result_int()), std::move(response.body())};
  }

  std::optional<HttpResponse> exchange(const Request& request, std::chrono::milliseconds timeout,
                                       beast::error_code& ec) {
    return secure ? exchange_on(*secure, request, timeout, ec)
                  : exchange_on(*plain, request, timeout, ec);
  }

  // exchange_on() with the body read a piece at a time: a 200 answer's to `sink`, another's kept.
  // `answered`: the header came, so the request must not be sent again.
  template <class Stream>
  std::optional<HttpResponse> stream_on(Stream& stream, const Request& request,
                                        std::chrono::milliseconds header_wait,
                                        std::chrono::milliseconds timeout, const BodySink& sink,
                                        bool& answered, beast::error_code& ec) {
    tcp().expires_after(timeout);
    ec = run([&](auto handler) { http::async_write(stream, request, handler); });
    if (ec) return std::nullopt;
    http::response_parser<http::buffer_body> parser;
    parser.body_limit(std::numeric_limits<std::uint64_t>::max());
    tcp().expires_after(header_wait);
    ec = run([&](auto handler) { http::async_read_header(stream, buffer, parser, handler); });
    if (ec) return std::nullopt;
    answered = true;
    HttpResponse response{static_cast<int>(parser.get().result_int()), {}};
    const bool streamed = response.status == 200;
    if (streamed && sink.header) {
      std::map<std::string, std::string> fields;
      for (const auto& field : parser.get()) {
        fields[lower(std::string(field.name_string()))] = std::string(field.value());
      }
      sink.header(fields);
    }
    std::vector<char> piece(kStreamPiece);
    while (!parser.is_done()) {
      parser.get().body().data = piece.data();
      parser.get().body().size = piece.size();
      tcp().expires_after(timeout);
      ec = run([&](auto handler) { http::async_read(stream, buffer, parser, handler); });
      if (ec == http::error::need_buffer) ec = {};
      if (ec) return std::nullopt;
      const std::size_t n = piece.size() - parser.get().body().size;
      if (streamed) {
        sink.data(piece.data(), n);
      } else if (response.body.size() < kMaxResponseBytes) {
        response.body.append(piece.data(), n);
      }
    }
    if (!parser.keep_alive()) shut();
    return response;
  }

  std::optional<HttpResponse> stream(const Request& request, std::chrono::milliseconds header_wait,
                                     std::chrono::milliseconds timeout, const BodySink& sink,
                                     bool& answered, beast::error_code& ec) {
    return secure ? stream_on(*secure, request, header_wait, timeout, sink, answered, ec)
                  : stream_on(*plain, request, header_wait, timeout, sink, answered, ec);
  }

  // Closes the TCP connection; over TLS without a close_notify (the daemon takes the EOF as the
  // end, and nothing is left to protect from truncation).
  void shut() {
    if (secure || plain) {
      beast::error_code ignored;
      tcp().socket().shutdown(tcp::socket::shutdown_both, ignored);
      tcp().close();
    }
    buffer.clear();
    open = false;
  }
};

HttpClient::HttpClient(Url url, std::string token, std::chrono::milliseconds timeout,
                       const std::string& ca_file)
    : url_(std::move(url)), token_(std::move(token)), timeout_(timeout) {
  if (url_.tls()) tls_ = std::make_unique<TlsContext>(ca_file);
}

HttpClient::~HttpClient() {
  close();
}

void HttpClient::close() {
  if (connection_ && connection_->open) connection_->shut();
}

void HttpClient::set_local_address(const std::string& address) {
  if (!address.empty() && !is_ip_address(address)) {
    throw std::invalid_argument("local address '" + address +
                                "' is not an IP address of this host (e.g. 10.0.0.5 or ::1)");
  }
  local_address_ = address;
}

namespace {

// A request with the header fields every request of a client carries.
Request new_request(const std::string& method, const std::string& target, const Url& url,
                    const std::string& token) {
  const auto verb = http::string_to_verb(method);
  if (verb == http::verb::unknown) throw std::invalid_argument("unknown HTTP method " + method);
  Request request{verb, target, 11};
  request.set(http::field::host, url.authority());
  request.set(http::field::user_agent, "nmt-tracker-client");
  request.set(http::field::accept, "application/json");
  if (!token.empty()) request.set(http::field::authorization, "Bearer " + token);
  return request;
}

// Runs `exchange(connection, answered)` on the kept connection, opening it when closed, and once
// more on a new one when a kept connection turned out stale (the daemon closed it while it was
// idle) and nothing was answered on it. The response, or nullopt with `ec` the failure.
// (A template over HttpClient's private Connection and TlsContext, which it deduces.)
template <class Connection, class Tls, class Exchange>
std::optional<HttpResponse> on_connection(std::unique_ptr<Connection>& connection, const Url& url,
                                          Tls* tls, std::chrono::milliseconds timeout,
                                          const std::string& local_address, beast::error_code& ec,
                                          Exchange&& exchange) {
  if (!connection) connection = std::make_unique<Connection>();
  for (int attempt = 0; attempt < 2; ++attempt) {
    const bool reused = connection->open;
    if (!reused) ec = connection->connect(url, tls, timeout, local_address);
    if (ec) break;
    bool answered = false;
    if (auto response = exchange(*connection, answered)) return response;
    connection->shut();
    if (answered || !reused || !is_stale_connection(ec)) break;
  }
  return std::nullopt;
}

}  // namespace

HttpResponse HttpClient::get_streamed(const std::string& target,
                                      std::chrono::milliseconds header_wait, const BodySink& sink) {
  Request request = new_request("GET", target, url_, token_);
  request.keep_alive(true);
  request.prepare_payload();
  beast::error_code ec;
  auto response = on_connection(connection_, url_, tls_.get(), timeout_, local_address_, ec,
                                [&](Connection& connection, bool& answered) {
                                  try {
                                    return connection.stream(request, header_wait, timeout_, sink,
                                                             answered, ec);
                                  } catch (...) {
                                    connection.shut();
                                    throw;
                                  }
                                });
  if (response) return std::move(*response);
  throw HttpError(fmt::format("GET {}{} failed: {}", url_.to_string(), target, ec.message()));
}

HttpResponse HttpClient::request(const std::string& method, const std::string& target,
                                 const std::string& body) {
  Request request = new_request(method, target, url_, token_);
  if (!body.empty()) {
    request.set(http::field::content_type, "application/json");
    request.body() = body;
  }
  request.keep_alive(true);
  request.prepare_payload();

  beast::error_code ec;
  auto response = on_connection(
      connection_, url_, tls_.get(), timeout_, local_address_, ec,
      [&](Connection& connection, bool&) { return connection.exchange(request, timeout_, ec); });
  if (response) return std::move(*response);
  // A daemon serving HTTPS closes a plain connection without a word.
  const bool maybe_https = !url_.tls() && ec == http::error::end_of_stream;
  throw HttpError(fmt::format("{} {}{} failed: {}{}", method, url_.to_string(), target,
                              ec.message(),
                              maybe_https ? " (closed without an answer: if the daemon serves "
                                            "HTTPS, use https://)"
                                          : ""));
}

}  // namespace nmt::tracker
