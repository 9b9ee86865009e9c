#pragma once
// Request bodies from text to JSON under limits, for the handler. nlohmann builds a tree node per
// value (a 16 MB body of '[' became 670 MB resident), so a scan that allocates nothing checks the
// nesting depth and the number of elements before anything is parsed. A number the parser cannot
// hold (1e999) is a 400 naming its field: only then is the body walked again to find the field.

#include <fmt/format.h>

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/json_fields.h"
#include "tracker/server/http_error.h"

namespace nmt::tracker::handler {

struct JsonLimits {
  std::size_t max_depth = 64;            // nested arrays and objects
  std::size_t max_elements = 1'000'000;  // arrays, objects and the items and members inside them
};

namespace detail {

// The path of the value being parsed ("points[3].value"), kept by a SAX pass that builds nothing.
class FieldLocator : public nlohmann::json_sax<nlohmann::json> {
 public:
  using json = nlohmann::json;

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(json::number_integer_t) override { return value(); }
  bool number_unsigned(json::number_unsigned_t) override { return value(); }
  bool number_float(json::number_float_t, const std::string&) override { return value(); }
  bool string(std::string&) override { return value(); }
  bool binary(json::binary_t&) override { return value(); }
  bool start_object(std::size_t) override { return open(false); }
  bool start_array(std::size_t) override { return open(true); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(std::string& name) override {
    frames_.back().key = name;
    return true;
  }
  bool parse_error(std::size_t, const std::string& token,
                   const nlohmann::detail::exception&) override {
    token_ = token;
    return false;
  }

  // Where the parse stopped: "points[0].value", or "body" at the top level.
  std::string path() const {
    std::string out;
    for (std::size_t i = 0; i < frames_.size(); ++i) {
      const Frame& frame = frames_[i];
      if (frame.array) {
        // The item that failed has not been counted yet; the items holding deeper frames have.
        out += fmt::format("[{}]", frame.index + (i + 1 == frames_.size() ? 1 : 0));
      } else if (!frame.key.empty()) {
        out += (out.empty() ? "" : ".") + frame.key;
      }
    }
    return out.empty() ? "body" : out;
  }
  const std::string& token() const { return token_; }

 private:
  struct Frame {
    bool array = false;
    std::ptrdiff_t index = -1;  // of the current item, in an array
    std::string key;            // of the current member, in an object
  };
  bool value() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
    return true;
  }
  bool open(bool array) {
    value();
    frames_.push_back(Frame{array, -1, {}});
    return true;
  }
  bool close() {
    frames_.pop_back();
    return true;
  }

  std::vector<Frame> frames_;
  std::string token_;
};

}  // namespace detail

// Throws HttpError 400 (field "body") when `text` nests deeper than the limit or holds more
// elements; allocates nothing. Strings are skipped, escapes included; the JSON itself is checked
// by the parser later, so a malformed text only needs to be scanned without going wrong.
inline void check_json_shape(std::string_view text, const JsonLimits& limits) {
  std::size_t depth = 0, elements = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limits.max_depth) {
        throw HttpError(
            400,
            fmt::format("JSON body nests deeper than the limit of {} levels (at byte {})",
                        limits.max_depth, i),
            "body");
      }
      ++elements;
    } else if (c == ']' || c == '}') {
      depth -= depth > 0 ? 1 : 0;
    } else if (c == ',') {
      ++elements;
    }
    if (elements > limits.max_elements) {
      throw HttpError(400,
                      fmt::format("JSON body has more than the limit of {} elements (arrays, "
                                  "objects, items and members); send smaller batches",
                                  limits.max_elements),
                      "body");
    }
  }
}

// The body as a JSON object, or HttpError 400 (field "body") when it is malformed, too deep, too
// large or not an object; an nmt::FieldError naming the field's path when a number is out of
// range (1e999).
inline nlohmann::json parse_json_body(const std::string& text, const JsonLimits& limits) {
  using nlohmann::json;
  check_json_shape(text, limits);
  json body;
  try {
    body = json::parse(text);
  } catch (const json::parse_error& e) {
    throw HttpError(400, fmt::format("malformed JSON body: {}", e.what()), "body");
  } catch (const json::out_of_range&) {
    // The parser's own message names the number but not where it is.
    detail::FieldLocator locator;
    json::sax_parse(text, &locator);
    nmt::bad_field(
        locator.path(),
        fmt::format("holds the number {}, out of range of a double (at most about 1.8e308)",
                    locator.token()));
  }
  if (!body.is_object()) {
    throw HttpError(400, "the body must be a JSON object", "body");
  }
  return body;
}

}  // namespace nmt::tracker::handler
