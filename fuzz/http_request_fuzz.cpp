// Fuzz harness: HTTP requests through the tracker daemon's request handler
// (tracker/server/request_handler.h), socket-free, against a fresh in-memory SQLite store per
// input. An input is a session of requests separated by the byte 0x1e, each
//   METHOD TARGET\n[Authorization: ...\n][Cookie: ...\n]BODY
// with TARGET decoded as the server decodes it (request_target.h). The handler's promises are
// checked: it never throws, every /api/ answer is JSON, and no request is a 500 (a 500 is a store
// failure or a bug; bad input must be a 4xx naming what is wrong).

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

#include "fuzz/fuzz_input.h"
#include "tracker/server/request_handler.h"
#include "tracker/server/request_target.h"
#include "tracker/store/database.h"
#include "tracker/store/run_store.h"

namespace {

using nmt::tracker::Request;

// At most this many requests of an input are sent, so that one input stays fast.
constexpr std::size_t kMaxRequests = 16;
// The token of the daemon in a session whose first line is "TOKEN": requests then need it.
constexpr const char* kToken = "fuzz-token";

std::string_view take_line(std::string_view& text) {
  const std::size_t end = text.find('\n');
  const std::string_view line = text.substr(0, end);
  text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
  return line;
}

bool take_header(std::string_view& text, std::string_view name, std::string& value) {
  if (text.substr(0, name.size()) != name) return false;
  std::string_view line = take_line(text);
  line.remove_prefix(name.size());
  value = std::string(line);
  return true;
}

// The request of one part; false when its target does not decode (the server answers 400 then,
// before the handler).
bool parse_request(std::string_view text, Request& request) {
  const std::string_view line = take_line(text);
  const std::size_t space = line.find(' ');
  request.method = std::string(line.substr(0, space));
  const std::string_view target =
      space == std::string_view::npos ? std::string_view() : line.substr(space + 1);
  try {
    nmt::tracker::parse_target(target, request);
  } catch (const std::invalid_argument&) {
    return false;
  }
  while (take_header(text, "Authorization: ", request.authorization) ||
         take_header(text, "Cookie: ", request.cookie)) {
  }
  request.body = std::string(text);
  return true;
}

void check_response(const Request& request, const nmt::tracker::Response& response) {
  const std::string what = request.method + " " + request.path;
  if (response.status == 500) nmt::fuzz::finding(what + " answered 500: " + response.body);
  if (response.status < 200 || response.status > 599) {
    nmt::fuzz::finding(what + " answered status " + std::to_string(response.status));
  }
  if (response.content_type == "application/json" && !nlohmann::json::accept(response.body)) {
    nmt::fuzz::finding(what + " answered JSON that does not parse: " + response.body);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  nmt::fuzz::quiet_logs();
  std::string_view input = nmt::fuzz::as_text(data, size);
  std::string token;
  if (input.substr(0, 6) == "TOKEN\n") {
    token = kToken;
    input.remove_prefix(6);
  }
  nmt::tracker::Database db(":memory:");
  nmt::tracker::RunStore store(db);
  nmt::tracker::HandlerOptions options;
  // Small limits, so that the fuzzer reaches them with small inputs.
  options.max_response_points = 50;
  options.json.max_depth = 16;
  options.json.max_elements = 1000;
  nmt::tracker::RequestHandler handler(store, token, options);
  for (std::size_t count = 0; count < kMaxRequests; ++count) {
    const std::size_t end = input.find(nmt::fuzz::kPartSeparator);
    Request request;
    if (parse_request(input.substr(0, end), request)) {
      const nmt::tracker::HeaderCheck header = handler.check_header(request);
      if (header.refusal) {
        check_response(request, *header.refusal);
      } else {
        check_response(request, handler.handle(request));
      }
    }
    if (end == std::string_view::npos) break;
    input.remove_prefix(end + 1);
  }
  return 0;
}
