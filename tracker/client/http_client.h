#pragma once
// A small synchronous HTTP/1.1 client for the tracker's JSON API (tracker/API.md): one keep-alive
// connection, reused across requests and reopened when the daemon closed it, with a deadline on
// every connect, handshake, write and read. For an https URL it speaks TLS (OpenSSL) and verifies
// the daemon's certificate (against a CA file, or the system's CAs) and that it names the URL's
// host; a failure is a TlsError, never a fallback to plain HTTP. Beast and OpenSSL stay in the .cpp
// so the trainer's headers stay light.

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

namespace nmt::tracker {

// http://host:port or https://host:port: the daemon's root; the API's paths go after it.
struct Url {
  std::string scheme = "http";  // "http" or "https"
  std::string host;             // a name or an IP address (IPv6 without brackets)
  std::string port;
  bool tls() const { return scheme == "https"; }
  // "host:port", an IPv6 host in brackets: the Host header.
  std::string authority() const;
  std::string to_string() const { return scheme + "://" + authority(); }
};

// Accepts "http://host:port", "https://host:port", either with a trailing "/", "host:port" (http)
// and IPv6 literals in brackets ("https://[::1]:port"); the scheme is case-insensitive and the port
// defaults to 80 for http, 443 for https. Throws std::invalid_argument with the offending text
// otherwise (another scheme, a path, a bad port).
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

// The TLS handshake with an https daemon failed: its certificate did not verify (unknown CA,
// another host name, expired), or it does not speak TLS. The message names the URL and the reason.
// Retrying does not help until the CA file, the URL or the daemon's certificate changes.
class TlsError : public HttpError {
 public:
  using HttpError::HttpError;
};

class HttpClient {
 public:
  // `token`, when not empty, goes out as "Authorization: Bearer <token>". `timeout` bounds each of
  // connect, TLS handshake, write and read. For an https `url`, `ca_file` holds the PEM
  // certificates of the CAs to trust; empty: the system's default CA paths. Throws
  // std::invalid_argument naming the CA file when it cannot be loaded; contacts nothing yet.
  HttpClient(Url url, std::string token, std::chrono::milliseconds timeout,
             const std::string& ca_file = "");
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends `method` ("GET", "POST", "PUT") to `target` ("/api/runs?sweep=x"), with `body` as JSON
  // when not empty. Returns any HTTP status, 4xx and 5xx included; throws HttpError when no
  // response arrived (TlsError when the TLS handshake failed).
  HttpResponse request(const std::string& method, const std::string& target,
                       const std::string& body = "");

  // Drops the connection; the next request opens a new one.
  void close();

  const Url& url() const { return url_; }

 private:
  struct Connection;
  struct TlsContext;
  Url url_;
  std::string token_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<TlsContext> tls_;  // https only
  std::unique_ptr<Connection> connection_;
};

// Percent-encodes a query parameter name or value (RFC 3986 unreserved characters stay):
// api::percent_encode, kept under this name for the tools that use it.
std::string url_encode(const std::string& text);

}  // namespace nmt::tracker
