#pragma once
// A small synchronous HTTP/1.1 client for the tracker's JSON API (tracker/API.md): one keep-alive
// connection, reused across requests and reopened when the daemon closed it, with a deadline on
// every connect, write and read. Beast stays in the .cpp so the trainer's headers stay light.

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

namespace nmt::tracker {

// http://host:port, the only form the tracker uses (no TLS: it listens on 127.0.0.1 or a
// cluster-internal address).
struct Url {
  std::string host;
  std::string port;
  std::string to_string() const { return "http://" + host + ":" + port; }
};

// Accepts "http://host:port", "http://host:port/", "host:port" and "http://[::1]:port"; the port
// defaults to 80. Throws std::invalid_argument with the offending text otherwise.
Url parse_url(const std::string& text);

struct HttpResponse {
  int status = 0;
  std::string body;
};

// The request never got an HTTP answer: refused, timed out, reset, malformed response. The daemon
// may or may not have processed it (a lost response), so callers retry only idempotent requests.
class HttpError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class HttpClient {
 public:
  // `token`, when not empty, goes out as "Authorization: Bearer <token>". `timeout` bounds each of
  // connect, write and read.
  HttpClient(Url url, std::string token, std::chrono::milliseconds timeout);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends `method` ("GET", "POST", "PUT") to `target` ("/api/runs?sweep=x"), with `body` as JSON
  // when not empty. Returns any HTTP status, 4xx and 5xx included; throws HttpError when no
  // response arrived.
  HttpResponse request(const std::string& method, const std::string& target,
                       const std::string& body = "");

  // Drops the connection; the next request opens a new one.
  void close();

  const Url& url() const { return url_; }

 private:
  struct Connection;
  Url url_;
  std::string token_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<Connection> connection_;
};

// Percent-encodes a query parameter name or value (RFC 3986 unreserved characters stay):
// api::percent_encode, kept under this name for the tools that use it.
std::string url_encode(const std::string& text);

}  // namespace nmt::tracker
