#include "tracker/api/series_query.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "common/json_fields.h"
#include "tracker/api/limits.h"

namespace nmt::tracker::api {
namespace {

// The items of a comma-separated list, each non-empty, duplicates dropped (the first kept).
std::vector<std::string> list_items(const std::string& name, const std::string& text,
                                    const char* wanted) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    std::string item = text.substr(start, comma - start);
    if (item.empty()) bad_field(name, fmt::format("wants {}, not '{}'", wanted, text));
    if (std::find(items.begin(), items.end(), item) == items.end()) {
      items.push_back(std::move(item));
    }
    start = comma + 1;
  }
  return items;
}

std::optional<std::int64_t> integer(const std::string& text) {
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end) return std::nullopt;
  return value;
}

std::vector<std::int64_t> parse_runs(const std::string& text) {
  std::vector<std::int64_t> runs;
  for (const std::string& item : list_items("runs", text, "comma-separated run ids")) {
    const auto id = integer(item);
    if (!id) bad_field("runs", fmt::format("'{}' is not a run id (an integer)", item));
    runs.push_back(*id);
  }
  if (runs.size() > kMaxSeriesRuns) {
    bad_field("runs", fmt::format("names {} runs, over the limit of {} runs per request",
                                  runs.size(), kMaxSeriesRuns));
  }
  return runs;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> to_query(const SeriesQuery& query) {
  std::vector<std::pair<std::string, std::string>> out;
  out.emplace_back("runs", fmt::format("{}", fmt::join(query.runs, ",")));
  out.emplace_back("keys",
                   query.keys.all ? "*" : fmt::format("{}", fmt::join(query.keys.keys, ",")));
  if (query.max_points) out.emplace_back("max_points", std::to_string(*query.max_points));
  return out;
}

SeriesQuery series_query_from(const std::map<std::string, std::string>& query) {
  SeriesQuery out;
  bool has_runs = false, has_keys = false;
  for (const auto& [name, value] : query) {
    if (name == "runs") {
      out.runs = parse_runs(value);
      has_runs = true;
    } else if (name == "keys") {
      out.keys.all = value == "*";
      if (!out.keys.all) out.keys.keys = list_items(name, value, "comma-separated keys or '*'");
      has_keys = true;
    } else if (name == "max_points") {
      out.max_points = integer(value);
      if (!out.max_points || *out.max_points < 1) {
        bad_field(name, fmt::format("must be an integer of at least 1, not '{}'", value));
      }
    } else {
      throw FieldError(name, "is not a known query parameter");
    }
  }
  if (!has_runs) bad_field("runs", "is required: comma-separated run ids");
  if (!has_keys) bad_field("keys", "is required: comma-separated keys or '*'");
  return out;
}

}  // namespace nmt::tracker::api
