#include "tracker/api/run_query.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/json_fields.h"

namespace nmt::tracker::api {
namespace {

std::string selection_text(const KeySelection& selection) {
  return selection.all ? "*" : fmt::format("{}", fmt::join(selection.keys, ","));
}

KeySelection parse_selection(const std::string& name, const std::string& text) {
  KeySelection selection;
  if (text == "*") {
    selection.all = true;
    return selection;
  }
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string key = text.substr(start, comma - start);
    if (key.empty()) {
      bad_field(name, fmt::format("wants comma-separated keys or '*', not '{}'", text));
    }
    selection.keys.push_back(key);
    start = comma + 1;
  }
  return selection;
}

// An evals=... selection: every key SPLIT/FIGURE.
KeySelection parse_eval_selection(const std::string& name, const std::string& text) {
  KeySelection selection = parse_selection(name, text);
  for (const std::string& key : selection.keys) {
    if (!is_valid_eval_key(key)) {
      bad_field(name, fmt::format("'{}' is not SPLIT/FIGURE with FIGURE one of {} (e.g. test/bleu)",
                                  key, fmt::join(eval_figures(), ", ")));
    }
  }
  return selection;
}

SortOrder parse_sort(const std::string& text) {
  SortOrder sort;
  std::string field = text;
  if (!field.empty() && field.front() == '-') {
    sort.descending = true;
    field.erase(0, 1);
  }
  if (field.rfind("metric:", 0) == 0) {
    sort.source = SortOrder::Source::kMetric;
    field.erase(0, 7);
  } else if (field.rfind("param:", 0) == 0) {
    sort.source = SortOrder::Source::kParam;
    field.erase(0, 6);
  } else if (field.rfind("eval:", 0) == 0) {
    sort.source = SortOrder::Source::kEval;
    field.erase(0, 5);
    if (!is_valid_eval_key(field)) {
      bad_field("sort", fmt::format("'{}' wants eval:SPLIT/FIGURE with FIGURE one of {} (e.g. "
                                    "-eval:test/bleu)",
                                    text, fmt::join(eval_figures(), ", ")));
    }
  } else if (std::find(summary_sort_fields().begin(), summary_sort_fields().end(), field) ==
             summary_sort_fields().end()) {
    bad_field(
        "sort",
        fmt::format(
            "'{}' is not one of {}, metric:<key>, param:<key> or eval:<split>/<figure> (prefix '-' "
            "for descending)",
            text, fmt::join(summary_sort_fields(), ", ")));
  }
  if (field.empty()) bad_field("sort", fmt::format("'{}' names no key", text));
  sort.field = field;
  return sort;
}

}  // namespace

bool KeySelection::selects(const std::string& key) const {
  return all || std::find(keys.begin(), keys.end(), key) != keys.end();
}

const std::vector<std::string>& eval_figures() {
  static const std::vector<std::string> kFigures = {"bleu", "chrf", "ppl"};
  return kFigures;
}

bool is_valid_eval_key(const std::string& key) {
  const std::size_t slash = key.rfind('/');
  if (slash == std::string::npos || slash == 0) return false;
  const std::string figure = key.substr(slash + 1);
  return std::find(eval_figures().begin(), eval_figures().end(), figure) != eval_figures().end();
}

const std::vector<std::string>& summary_sort_fields() {
  static const std::vector<std::string> kFields = {
      "run_id",       "experiment",     "name",        "uid",          "sweep",    "row_label",
      "row_index",    "status",         "config_hash", "git_revision", "host",     "world_size",
      "slurm_job_id", "slurm_array_id", "attempt",     "started_at",   "ended_at", "deleted_at",
      "attempts",     "duration_s"};
  return kFields;
}

std::vector<std::pair<std::string, std::string>> to_query(const RunQuery& query) {
  std::vector<std::pair<std::string, std::string>> out;
  const auto add = [&](const char* name, const std::optional<std::string>& value) {
    if (value) out.emplace_back(name, *value);
  };
  add("experiment", query.experiment);
  add("sweep", query.sweep);
  add("status", query.status);
  add("uid", query.uid);
  add("name", query.name);
  if (query.deleted != DeletedRuns::kHidden) {
    out.emplace_back("deleted", query.deleted == DeletedRuns::kOnly ? "1" : "all");
  }
  for (const auto& [key, value] : query.params) out.emplace_back("param." + key, value);
  if (query.metrics) out.emplace_back("metrics", selection_text(*query.metrics));
  if (query.evals) out.emplace_back("evals", selection_text(*query.evals));
  if (query.show_params) out.emplace_back("params", selection_text(*query.show_params));
  if (query.sort) {
    const SortOrder& s = *query.sort;
    const char* prefix = s.source == SortOrder::Source::kMetric  ? "metric:"
                         : s.source == SortOrder::Source::kParam ? "param:"
                         : s.source == SortOrder::Source::kEval  ? "eval:"
                                                                 : "";
    out.emplace_back("sort", fmt::format("{}{}{}", s.descending ? "-" : "", prefix, s.field));
  }
  return out;
}

RunQuery run_query_from(const std::map<std::string, std::string>& query) {
  RunQuery out;
  for (const auto& [name, value] : query) {
    if (name == "experiment") {
      out.experiment = value;
    } else if (name == "sweep") {
      out.sweep = value;
    } else if (name == "status") {
      out.status = value;
    } else if (name == "uid") {
      out.uid = value;
    } else if (name == "name") {
      out.name = value;
    } else if (name == "deleted") {
      if (value != "0" && value != "1" && value != "all") {
        bad_field(name, fmt::format("must be 0, 1 or all, not '{}'", value));
      }
      out.deleted = value == "0"   ? DeletedRuns::kHidden
                    : value == "1" ? DeletedRuns::kOnly
                                   : DeletedRuns::kAll;
    } else if (name.rfind("param.", 0) == 0 && name.size() > 6) {
      out.params[name.substr(6)] = value;
    } else if (name == "metrics") {
      out.metrics = parse_selection(name, value);
    } else if (name == "evals") {
      out.evals = parse_eval_selection(name, value);
    } else if (name == "params") {
      out.show_params = parse_selection(name, value);
    } else if (name == "sort") {
      out.sort = parse_sort(value);
    } else {
      throw FieldError(name, "is not a known query parameter");
    }
  }
  return out;
}

}  // namespace nmt::tracker::api
