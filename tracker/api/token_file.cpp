#include "tracker/api/token_file.h"

#include <fstream>
#include <iterator>
#include <stdexcept>

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
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw std::runtime_error("cannot read the token file " + path + " (named by " + named_by + ")");
  }
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string token = trim_blanks(text);
  if (token.empty()) {
    throw std::runtime_error("the token file " + path + " (named by " + named_by + ") is empty");
  }
  return token;
}

}  // namespace nmt::tracker::api
