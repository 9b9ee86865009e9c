#pragma once
// The query of GET /api/runs (tracker/API.md) as a value: filters (ANDed), which extra columns
// each summary carries (last metric values, latest eval figures, params), and the sort order. The
// client turns it into query parameters, the handler back; a bad parameter is a FieldError naming
// it.

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace nmt::tracker::api {

enum class DeletedRuns { kHidden, kOnly, kAll };  // deleted=0 (default), 1, all

// "a,b" or "*": which metric keys or params a summary carries.
struct KeySelection {
  bool all = false;               // "*"
  std::vector<std::string> keys;  // when not all
  bool selects(const std::string& key) const;
};

struct SortOrder {
  enum class Source { kSummary, kMetric, kParam, kEval };
  Source source = Source::kSummary;
  // A summary field (summary_sort_fields()), a metric key, a param key or an eval key (SPLIT/bleu).
  std::string field;
  bool descending = false;
};

struct RunQuery {
  std::optional<std::string> experiment;
  std::optional<std::string> sweep;
  std::optional<std::string> status;
  std::optional<std::string> uid;
  std::optional<std::string> name;  // the exact run name
  DeletedRuns deleted = DeletedRuns::kHidden;
  std::map<std::string, std::string> params;  // param.<key>=<value>
  std::optional<KeySelection> metrics;        // metrics=...: summaries gain last_metrics
  std::optional<KeySelection> evals;          // evals=...: summaries gain last_evals
  std::optional<KeySelection> show_params;    // params=...: summaries gain params
  std::optional<SortOrder> sort;              // runs without the value sort last; else by id
};

// The figures of an eval key "SPLIT/FIGURE": bleu, chrf, ppl (the perplexity).
const std::vector<std::string>& eval_figures();
// Whether `key` is SPLIT/FIGURE with a non-empty split and a figure of eval_figures().
bool is_valid_eval_key(const std::string& key);

// The summary fields a listing can be sorted by.
const std::vector<std::string>& summary_sort_fields();

// The query parameters of `query`, in a fixed order.
std::vector<std::pair<std::string, std::string>> to_query(const RunQuery& query);
// From decoded query parameters; throws FieldError naming the parameter at fault.
RunQuery run_query_from(const std::map<std::string, std::string>& query);

}  // namespace nmt::tracker::api
