#include "tracker/api/token_file.h"

#include <fstream>
#include <iterator>
#include <stdexcept>

#include "common/checked_paths.h"

namespace nmt::tracker::api {

namespace {
constexpr const char* kBlanks = " \t\r\n";
}  // namespace

std::string trim_blanks(std::string_view text) {
  const auto first = text.find_first_not_of(kBlanks);
  if (first == std::string_view::npos) return {};
  return std::string(text.substr(first, text.find_last_not_of(kBlanks) - first + 1));
}

std::string read_token_file(const std::string& path, const std::string& named_by) {
  // A token is a line of text; 64 KiB is far past any.
  const std::string text =
      read_regular_file(path, 64u << 10, "the token file (named by " + named_by + ")");
  std::string token = trim_blanks(text);
  if (token.empty()) {
    throw std::runtime_error("the token file " + path + " (named by " + named_by + ") is empty");
  }
  return token;
}

}  // namespace nmt::tracker::api
