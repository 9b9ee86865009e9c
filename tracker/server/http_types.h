#pragma once
// Plain request and response values between the HTTP server (sockets, Beast) and the request
// handler (routes, JSON, the store). The handler never sees a socket; the server never parses JSON.

#include <map>
#include <string>

namespace nmt::tracker {

struct Request {
  std::string method;                        // "GET", "POST", "PUT"
  std::string path;                          // "/api/runs/3/metrics", percent-decoded
  std::map<std::string, std::string> query;  // decoded query parameters
  std::string authorization;                 // the Authorization header, or empty
  std::string body;
};

struct Response {
  int status = 200;
  std::string body;  // JSON
  std::string content_type = "application/json";
};

}  // namespace nmt::tracker
