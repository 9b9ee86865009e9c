#include "tracker/api/run_rules.h"

#include <algorithm>
#include <cctype>

namespace nmt::tracker::api {

bool is_valid_run_uid(const std::string& uid) {
  return uid.size() >= 8 && uid.size() <= 64 && std::all_of(uid.begin(), uid.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
         });
}

bool is_valid_run_status(const std::string& status) {
  return status == "running" || status == "finished" || status == "failed" || status == "killed" ||
         status == "preempted" || status == "crashed";
}

}  // namespace nmt::tracker::api
