#pragma once
// Plain request and response values between the HTTP server (sockets, Beast) and the request
// handler (routes, JSON, the store). The handler never sees a socket; the server never parses JSON.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace nmt::tracker {

struct Request {
  std::string method;                        // "GET", "POST", "PUT", "DELETE"
  std::string path;                          // "/api/runs/3/metrics", percent-decoded
  std::map<std::string, std::string> query;  // decoded query parameters
  std::string authorization;                 // the Authorization header, or empty
  std::string body;
  std::string cookie;  // the Cookie header, or empty
};

// A file sent as a response's body a piece at a time, never held in memory (a database backup):
// size() bytes of descriptor() from offset 0, read with pread. The server keeps its reference until
// the answer is sent or abandoned; the last reference frees the file.
class BodyFile {
 public:
  virtual ~BodyFile() = default;
  virtual int descriptor() const = 0;
  virtual std::uint64_t size() const = 0;
};

struct Response {
  // A constructor rather than an aggregate, so that Response{status, body} leaves the rest at
  // their defaults without a missing-initializer warning.
  Response(int status_ = 200, std::string body_ = {},
           std::string content_type_ = "application/json")
      : status(status_), body(std::move(body_)), content_type(std::move(content_type_)) {}

  int status = 200;
  std::string body;  // JSON, or a dashboard file
  std::string content_type = "application/json";
  // Extra headers, e.g. {"Location", "/"} and {"Set-Cookie", "..."}; the server sets the others.
  std::vector<std::pair<std::string, std::string>> headers;
  // When set, the body instead of `body`.
  std::shared_ptr<const BodyFile> body_file;
};

// What the request line and headers alone decide, before a byte of the body is read.
struct HeaderCheck {
  std::optional<Response> refusal;  // sent, and the connection closed, without reading the body
  // The request carries the daemon's token (any request does when the daemon has none): its
  // connection is proven, so it may use every connection slot (ServerOptions, HttpServer).
  bool proven = false;
};

}  // namespace nmt::tracker
