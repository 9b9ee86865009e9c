#include "tracker/server/sweep_layout.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace nmt::tracker {
namespace {

constexpr const char* kParameterCount = "model.parameter_count";
constexpr std::string_view kReference = "reference.";
constexpr std::string_view kLegacyReference = "ref.";

bool starts_with(const std::string& text, std::string_view prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

std::optional<api::ParamValue> param(const SweepRun& run, const std::string& key) {
  const auto it = run.params.find(key);
  return it == run.params.end() ? std::nullopt : std::optional(it->second);
}

// A run's reference figures by column name, the legacy "ref." spelling included.
std::map<std::string, api::ParamValue> references(const SweepRun& run) {
  std::map<std::string, api::ParamValue> out;
  for (const auto& [key, value] : run.params) {
    if (starts_with(key, kLegacyReference)) {
      out.emplace(std::string(kReference) + key.substr(kLegacyReference.size()), value);
    }
  }
  for (const auto& [key, value] : run.params) {
    if (starts_with(key, kReference)) out[key] = value;
  }
  return out;
}

bool is_result_or_reference(const std::string& key) {
  return key == kParameterCount || starts_with(key, kReference) ||
         starts_with(key, kLegacyReference);
}

// The varying params, by the first row that changes them, then by key.
std::vector<std::string> varying_params(const std::vector<SweepRun>& runs) {
  std::set<std::string> keys;
  for (const SweepRun& run : runs) {
    for (const auto& [key, value] : run.params) {
      if (!is_result_or_reference(key)) keys.insert(key);
    }
  }
  std::vector<std::pair<std::size_t, std::string>> varying;  // (first differing row, key)
  for (const std::string& key : keys) {
    const auto first = param(runs.front(), key);
    for (std::size_t row = 1; row < runs.size(); ++row) {
      if (param(runs[row], key) != first) {
        varying.emplace_back(row, key);
        break;
      }
    }
  }
  std::sort(varying.begin(), varying.end());
  std::vector<std::string> out;
  for (auto& [row, key] : varying) out.push_back(std::move(key));
  return out;
}

std::optional<api::ParamValue> figure(const std::optional<EvalFigures>& eval,
                                      std::optional<double> EvalFigures::*field) {
  if (!eval || !((*eval).*field)) return std::nullopt;
  return api::ParamValue(*((*eval).*field));
}

}  // namespace

api::SweepTable sweep_table(const std::string& sweep, const std::vector<SweepRun>& runs) {
  api::SweepTable table;
  table.sweep = sweep;
  if (runs.empty()) return table;
  const std::vector<std::string> varying = varying_params(runs);
  for (const std::string& key : varying) table.columns.push_back({key, api::ColumnKind::kParam});
  table.columns.push_back({"params", api::ColumnKind::kParam});
  table.columns.push_back({"dev_ppl", api::ColumnKind::kEval});
  table.columns.push_back({"dev_bleu", api::ColumnKind::kEval});
  const bool any_test = std::any_of(runs.begin(), runs.end(),
                                    [](const SweepRun& run) { return run.test.has_value(); });
  if (any_test) table.columns.push_back({"test_bleu", api::ColumnKind::kEval});
  std::set<std::string> reference_names;
  for (const SweepRun& run : runs) {
    for (const auto& [name, value] : references(run)) reference_names.insert(name);
  }
  for (const std::string& name : reference_names) {
    table.columns.push_back({name, api::ColumnKind::kReference});
  }

  for (const SweepRun& run : runs) {
    api::SweepRow row{run.run_id, run.name, run.row_label, run.row_index, run.status, {}};
    for (const std::string& key : varying) row.values[key] = param(run, key);
    row.values["params"] = param(run, kParameterCount);
    row.values["dev_ppl"] = figure(run.valid, &EvalFigures::perplexity);
    row.values["dev_bleu"] = figure(run.valid, &EvalFigures::bleu);
    if (any_test) row.values["test_bleu"] = figure(run.test, &EvalFigures::bleu);
    const auto figures = references(run);
    for (const std::string& name : reference_names) {
      const auto it = figures.find(name);
      row.values[name] = it == figures.end() ? std::nullopt : std::optional(it->second);
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace nmt::tracker
