#include "tracker/api/run_rules.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <random>

namespace nmt::tracker::api {

bool is_valid_run_uid(const std::string& uid) {
  return uid.size() >= 8 && uid.size() <= 64 && std::all_of(uid.begin(), uid.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
         });
}

std::string generate_run_uid() {
  std::random_device device;
  std::string uid;
  for (int word = 0; word < 4; ++word) {
    uid += fmt::format("{:08x}", static_cast<std::uint32_t>(device()));
  }
  return uid;
}

bool is_valid_run_status(const std::string& status) {
  return status == "running" || status == "finished" || status == "failed" || status == "killed" ||
         status == "preempted" || status == "crashed";
}

}  // namespace nmt::tracker::api
