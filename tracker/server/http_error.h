#pragma once
// A failure the handler answers with its HTTP status, and the field or query parameter at fault
// when there is one (`{"error", "field"}`, tracker/API.md). A malformed field of a body is an
// nmt::FieldError instead (common/json_fields.h), answered 400 the same way.

#include <stdexcept>
#include <string>
#include <utility>

// Its own namespace: the client library has an HttpError of its own, and tests link both.
namespace nmt::tracker::handler {

class HttpError : public std::runtime_error {
 public:
  HttpError(int status, const std::string& message, std::string field = {})
      : std::runtime_error(message), status_(status), field_(std::move(field)) {}
  int status() const { return status_; }
  const std::string& field() const { return field_; }

 private:
  int status_;
  std::string field_;
};

}  // namespace nmt::tracker::handler
