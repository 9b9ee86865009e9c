#include "tracker/cli/run_ref.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <vector>

#include "common/cli.h"
#include "tracker/client/tracker_reader.h"
#include "tracker/view/human_format.h"
#include "tracker/view/table_format.h"

namespace nmt::tracker::cli {
namespace {

bool all_digits(const std::string& text) {
  return !text.empty() && text.size() <= 18 &&
         std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
}

std::string lowercase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

std::int64_t resolve_run(TrackerReader& reader, const std::string& ref, bool include_deleted) {
  if (ref.empty()) throw nmt::UsageError("a run is named by its id or its name, not ''");
  if (all_digits(ref)) return std::stoll(ref);
  api::RunQuery query;
  query.name = ref;
  query.deleted = include_deleted ? api::DeletedRuns::kAll : api::DeletedRuns::kHidden;
  const auto runs = reader.list_runs(query);
  if (runs.size() == 1) return runs.front().run_id;
  if (runs.size() > 1) {
    std::vector<std::string> listed;
    for (const auto& run : runs) {
      listed.push_back(fmt::format("{} ({}, started {})", run.run_id, printable(run.experiment),
                                   format_utc_time(run.started_at)));
    }
    throw std::runtime_error(fmt::format("{} runs are named '{}': {}; name one by its id",
                                         runs.size(), printable(ref), fmt::join(listed, ", ")));
  }
  // No exact match: the names that contain it, as a hint.
  api::RunQuery everything;
  everything.deleted = query.deleted;
  std::vector<std::string> close;
  const std::string needle = lowercase(ref);
  for (const auto& run : reader.list_runs(everything)) {
    if (lowercase(run.name).find(needle) != std::string::npos && close.size() < 10) {
      close.push_back(fmt::format("{} ({})", printable(run.name), run.run_id));
    }
  }
  throw std::runtime_error(
      close.empty()
          ? fmt::format("no run is named '{}' (nmt-tracker runs lists them)", printable(ref))
          : fmt::format("no run is named '{}'; names that contain it: {}", printable(ref),
                        fmt::join(close, ", ")));
}

}  // namespace nmt::tracker::cli
