#pragma once
// A small synchronous HTTP/1.1 client for the tracker's JSON API (tracker/API.md): one keep-alive
// connection, reused across requests and reopened when the daemon closed it, with a deadline on
// every connect, handshake, write and read. For an https URL it speaks TLS (OpenSSL) and verifies
// the daemon's certificate (against a CA file, or the system's CAs) and that it names the URL's
// host; a failure is a TlsError, never a fallback to plain HTTP. Beast and OpenSSL stay in the .cpp
// so the trainer's headers stay light.

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
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

// Where a streamed answer goes (HttpClient::get_streamed): `header` once with the header fields of
// a 200 answer (names in lower case), then `data` with each piece of its body as it arrives.
struct BodySink {
  std::function<void(const std::map<std::string, std::string>& fields)> header;
  std::function<void(const char* data, std::size_t size)> data;
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

  // GET `target` with a 200 answer's body handed to `sink` piece by piece, never held whole (a
  // database backup). The header may take up to `header_wait` (the daemon prepares the body
  // first); each read after it, the client's timeout. Returns the status, and the body of an answer
  // other than 200 (not streamed). Throws HttpError when no complete answer arrived (one whose
  // body broke off included), and what `sink` throws; the connection is closed then.
  HttpResponse get_streamed(const std::string& target, std::chrono::milliseconds header_wait,
                            const BodySink& sink);

  // Drops the connection; the next request opens a new one.
  void close();

  // Connections leave from `address`, an IP literal of this host (the interface a multi-homed node
  // must use), the port chosen by the kernel; empty: the address routing picks. Throws
  // std::invalid_argument when it is not an IP address. Applies from the next connection.
  void set_local_address(const std::string& address);

  const Url& url() const { return url_; }

 private:
  struct Connection;
  struct TlsContext;
  Url url_;
  std::string token_;
  std::chrono::milliseconds timeout_;
  std::string local_address_;        // empty: any
  std::unique_ptr<TlsContext> tls_;  // https only
  std::unique_ptr<Connection> connection_;
};

// Percent-encodes a query parameter name or value (RFC 3986 unreserved characters stay):
// api::percent_encode, kept under this name for the tools that use it.
std::string url_encode(const std::string& text);

}  // namespace nmt::tracker
