#include "tracker/api/run_rules.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <random>

#include "common/named_choices.h"

namespace nmt::tracker::api {
namespace {

constexpr NamedChoices<RunStatus, 6> kRunStatuses{{{{RunStatus::kRunning, "running"},
                                                    {RunStatus::kFinished, "finished"},
                                                    {RunStatus::kFailed, "failed"},
                                                    {RunStatus::kKilled, "killed"},
                                                    {RunStatus::kPreempted, "preempted"},
                                                    {RunStatus::kCrashed, "crashed"}}}};

}  // namespace

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

const char* to_string(RunStatus status) {
  return kRunStatuses.name(status);
}

bool is_valid_run_status(const std::string& status) {
  return kRunStatuses.find(status).has_value();
}

std::vector<std::string> run_status_words() {
  std::vector<std::string> words;
  for (const auto& entry : kRunStatuses.entries) words.emplace_back(entry.second);
  return words;
}

}  // namespace nmt::tracker::api
