#include "tracker/client/http_client.h"

#include <fmt/format.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <cctype>
#include <optional>

#include "tracker/api/routes.h"

namespace nmt::tracker {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

// The longest answer we accept: the full metric series of a long run.
constexpr std::uint64_t kMaxResponseBytes = std::uint64_t{1} << 30;

using Request = http::request<http::string_body>;

[[noreturn]] void bad_url(const std::string& text, const std::string& why) {
  throw std::invalid_argument("bad tracker URL '" + text + "': " + why +
                              " (expected http://host:port, e.g. http://127.0.0.1:6006)");
}

bool is_port(const std::string& port) {
  if (port.empty() || port.size() > 5) return false;
  for (const char c : port) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  const int value = std::stoi(port);
  return value > 0 && value < 65536;
}

// A daemon that closed an idle keep-alive connection shows up as one of these on the next request
// over it. Sending again on a fresh connection is then right; the rare case where the daemon did
// process the request and died before answering is the lost response that the metrics endpoint
// dedupes by sequence number.
bool is_stale_connection(const beast::error_code& ec) {
  return ec == http::error::end_of_stream || ec == asio::error::eof ||
         ec == asio::error::connection_reset || ec == asio::error::broken_pipe;
}

}  // namespace

Url parse_url(const std::string& text) {
  std::string rest = text;
  if (rest.rfind("https://", 0) == 0) bad_url(text, "https is not supported");
  if (rest.rfind("http://", 0) == 0) rest.erase(0, 7);
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  if (rest.empty()) bad_url(text, "no host");
  Url url;
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
    url.port = "80";
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

// One TCP connection and the io_context that drives it. Every operation is asynchronous under
// the hood only so that beast::tcp_stream's expiry can bound it; run() waits for it to finish.
struct HttpClient::Connection {
  asio::io_context ioc;
  beast::tcp_stream stream{ioc};
  beast::flat_buffer buffer;
  bool open = false;

  template <class Start>
  beast::error_code run(Start start) {
    beast::error_code result = asio::error::would_block;
    start([&result](beast::error_code ec, auto&&...) { result = ec; });
    ioc.restart();
    ioc.run();
    return result;
  }

  beast::error_code connect(const Url& url, std::chrono::milliseconds timeout) {
    beast::error_code ec;
    tcp::resolver resolver(ioc);
    const auto endpoints = resolver.resolve(url.host, url.port, ec);
    if (ec) return ec;
    stream.expires_after(timeout);
    ec = run([&](auto handler) { stream.async_connect(endpoints, handler); });
    open = !ec;
    return ec;
  }

  std::optional<HttpResponse> exchange(const Request& request, std::chrono::milliseconds timeout,
                                       beast::error_code& ec) {
    stream.expires_after(timeout);
    ec = run([&](auto handler) { http::async_write(stream, request, handler); });
    if (ec) return std::nullopt;
    http::response_parser<http::string_body> parser;
    parser.body_limit(kMaxResponseBytes);
    stream.expires_after(timeout);
    ec = run([&](auto handler) { http::async_read(stream, buffer, parser, handler); });
    if (ec) return std::nullopt;
    auto& response = parser.get();
    if (!response.keep_alive()) shut();
    return HttpResponse{static_cast<int>(response.result_int()), std::move(response.body())};
  }

  void shut() {
    beast::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream.close();
    buffer.clear();
    open = false;
  }
};

HttpClient::HttpClient(Url url, std::string token, std::chrono::milliseconds timeout)
    : url_(std::move(url)), token_(std::move(token)), timeout_(timeout) {}

HttpClient::~HttpClient() {
  close();
}

void HttpClient::close() {
  if (connection_ && connection_->open) connection_->shut();
}

HttpResponse HttpClient::request(const std::string& method, const std::string& target,
                                 const std::string& body) {
  const auto verb = http::string_to_verb(method);
  if (verb == http::verb::unknown) throw std::invalid_argument("unknown HTTP method " + method);
  Request request{verb, target, 11};
  request.set(http::field::host, url_.host + ":" + url_.port);
  request.set(http::field::user_agent, "nmt-tracker-client");
  request.set(http::field::accept, "application/json");
  if (!token_.empty()) request.set(http::field::authorization, "Bearer " + token_);
  if (!body.empty()) {
    request.set(http::field::content_type, "application/json");
    request.body() = body;
  }
  request.keep_alive(true);
  request.prepare_payload();

  if (!connection_) connection_ = std::make_unique<Connection>();
  beast::error_code ec;
  for (int attempt = 0; attempt < 2; ++attempt) {
    const bool reused = connection_->open;
    if (!reused) ec = connection_->connect(url_, timeout_);
    if (ec) break;
    if (auto response = connection_->exchange(request, timeout_, ec)) return std::move(*response);
    connection_->shut();
    if (!reused || !is_stale_connection(ec)) break;
  }
  throw HttpError(
      fmt::format("{} {}{} failed: {}", method, url_.to_string(), target, ec.message()));
}

}  // namespace nmt::tracker
