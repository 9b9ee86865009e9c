#include "tracker/server/token_gate.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "tracker/server/http_error.h"

namespace nmt::tracker {
namespace {

constexpr std::string_view kTokenCookie = "nmt_tracker_token";

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// The value of the token cookie in a Cookie header ("a=1; nmt_tracker_token=t"), or nullopt.
std::optional<std::string_view> token_cookie(std::string_view header) {
  while (!header.empty()) {
    const std::size_t semicolon = std::min(header.find(';'), header.size());
    std::string_view pair = header.substr(0, semicolon);
    header.remove_prefix(std::min(semicolon + 1, header.size()));
    while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
    if (starts_with(pair, kTokenCookie) && pair.size() > kTokenCookie.size() &&
        pair[kTokenCookie.size()] == '=') {
      return pair.substr(kTokenCookie.size() + 1);
    }
  }
  return std::nullopt;
}

// RFC 6265's cookie-octet: what a cookie value may hold without quoting.
bool is_cookie_safe(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u > 0x20 && u < 0x7F && c != '"' && c != ',' && c != ';' && c != '\\';
  });
}

}  // namespace

bool TokenGate::matches(std::string_view candidate) const {
  if (candidate.size() != token_.size()) {
    return false;
  }
  unsigned char difference = 0;
  for (std::size_t i = 0; i < token_.size(); ++i) {
    difference |= static_cast<unsigned char>(candidate[i] ^ token_[i]);
  }
  return difference == 0;
}

bool TokenGate::admits(const Request& request, bool api_path) const {
  if (open()) {
    return true;
  }
  const std::string_view scheme = "Bearer ";
  if (starts_with(request.authorization, scheme) &&
      matches(std::string_view(request.authorization).substr(scheme.size()))) {
    return true;
  }
  if (const auto cookie = token_cookie(request.cookie); cookie && matches(*cookie)) {
    return true;
  }
  // The dashboard's login link: GET /?token=<token>.
  const auto query_token = request.query.find("token");
  return !api_path && query_token != request.query.end() && matches(query_token->second);
}

std::string TokenGate::login_cookie(bool secure) const {
  if (!is_cookie_safe(token_)) {
    throw handler::HttpError(500,
                             "the daemon's token holds characters a cookie cannot carry (blanks, "
                             "quotes, ',', ';', '\\\\' or non-ASCII); give it a token of letters "
                             "and digits");
  }
  return fmt::format("{}={}; HttpOnly;{} SameSite=Strict; Path=/", kTokenCookie, token_,
                     secure ? " Secure;" : "");
}

}  // namespace nmt::tracker
