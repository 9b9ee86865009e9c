#pragma once
// Plain request and response values between the HTTP server (sockets, Beast) and the request
// handler (routes, JSON, the store). The handler never sees a socket; the server never parses JSON.

#include <map>
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
};

// What the request line and headers alone decide, before a byte of the body is read.
struct HeaderCheck {
  std::optional<Response> refusal;  // sent, and the connection closed, without reading the body
  // The request carries the daemon's token (any request does when the daemon has none): its
  // connection is proven, so it may use every connection slot (ServerOptions, HttpServer).
  bool proven = false;
};

}  // namespace nmt::tracker
