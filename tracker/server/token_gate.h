#pragma once
// The daemon's token (tracker/API.md, "Authentication"): whether a request carries it, as
// `Authorization: Bearer <token>`, as the cookie nmt_tracker_token, or on a dashboard path as the
// login link's `?token=<token>`; and the cookie that login link is answered with. Compared in time
// independent of where a candidate differs, so the token cannot be guessed bytewise.

#include <string>
#include <string_view>
#include <utility>

#include "tracker/api/http_types.h"

namespace nmt::tracker {

class TokenGate {
 public:
  // An empty `token` lets every request in.
  explicit TokenGate(std::string token) : token_(std::move(token)) {}

  bool open() const { return token_.empty(); }
  // Whether `request` carries the token; `?token=` counts only off the API (`api_path` false).
  bool admits(const Request& request, bool api_path) const;
  // The Set-Cookie value that hands the token to a browser (Secure when `secure`). Throws
  // handler::HttpError (500) when the token holds characters a cookie cannot carry.
  std::string login_cookie(bool secure) const;

 private:
  bool matches(std::string_view candidate) const;

  std::string token_;
};

}  // namespace nmt::tracker
