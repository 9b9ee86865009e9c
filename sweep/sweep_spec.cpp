#include "sweep/sweep_spec.h"

#include <fmt/format.h>

#include <cctype>
#include <filesystem>

#include "common/config_loader.h"

namespace nmt::sweep {
namespace {

namespace fs = std::filesystem;

// The resolved config without the tracker section (which rows always differ in).
std::string comparable(RunConfig config) {
  config.tracker = TrackerConfig{};
  return to_yaml(config);
}

RunConfig resolve(const SweepSpec& spec, const std::vector<std::string>& row_overrides,
                  const std::string& where) {
  auto overrides = spec.common_overrides;
  overrides.insert(overrides.end(), row_overrides.begin(), row_overrides.end());
  try {
    auto config = load_run_config(spec.base_config, overrides);
    config.validate();
    return config;
  } catch (const std::exception& e) {
    throw ConfigError(fmt::format("{}: {}: {}", spec.source, where, e.what()));
  }
}

Row read_row(const ConfigSection& section) {
  Row row;
  section.read("label", row.label);
  section.read("set", row.overrides);
  const auto ref = section.section("reference");
  ref.read("ppl", row.reference.ppl);
  ref.read("bleu", row.reference.bleu);
  ref.read("params", row.reference.params);
  ref.finish();
  section.finish();
  if (row.label.empty()) throw section.error("label", "every row needs a label");
  return row;
}

// Resolves every row's config against the base. A row that resolves to the base config must be
// the one base row, written without overrides: overrides that change nothing are a mistake.
void resolve_rows(SweepSpec& spec) {
  const std::string base = comparable(resolve(spec, {}, "base config"));
  bool seen_base = false;
  for (std::size_t i = 0; i < spec.rows.size(); ++i) {
    auto& row = spec.rows[i];
    const std::string where = fmt::format("row {} ({})", i, row.label);
    row.config = resolve(spec, row.overrides, where);
    if (comparable(row.config) != base) continue;
    if (!row.overrides.empty()) {
      throw ConfigError(
          fmt::format("{}: {}: its overrides [{}] change nothing relative to the "
                      "base config",
                      spec.source, where, fmt::join(row.overrides, ", ")));
    }
    if (seen_base) {
      throw ConfigError(
          fmt::format("{}: {}: a second row without overrides (the base row "
                      "is already there)",
                      spec.source, where));
    }
    seen_base = true;
  }
}

}  // namespace

SweepSpec load_sweep_spec(const std::string& path) {
  SweepSpec spec;
  spec.source = path;
  ConfigSection top(load_yaml_file(path), path);
  top.read("name", spec.name);
  top.read("experiment", spec.experiment);
  top.read("base", spec.base_config);
  top.read("set", spec.common_overrides);
  top.read("average_last", spec.average_last);
  const auto eval = top.section("eval");
  eval.read("split", spec.eval.split);
  eval.read("beam", spec.eval.beam);
  eval.read("alpha", spec.eval.alpha);
  eval.read("sentences", spec.eval.sentences);
  eval.finish();
  for (const auto& section : top.section_list("rows")) spec.rows.push_back(read_row(section));
  top.finish();
  if (spec.name.empty()) throw top.error("name", "the sweep needs a name");
  for (const char c : spec.name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
      throw top.error("name", "use letters, digits, '-', '_' and '.' only");
  }
  if (spec.experiment.empty()) spec.experiment = spec.name;
  if (spec.base_config.empty()) throw top.error("base", "the sweep needs a base run config");
  spec.base_config = (fs::path(path).parent_path() / spec.base_config).lexically_normal().string();
  if (spec.average_last < 1) throw top.error("average_last", "must be at least 1");
  if (spec.eval.beam < 1 || spec.eval.sentences < 0)
    throw eval.error("", "beam must be >= 1 and sentences >= 0");
  if (spec.eval.alpha < 0) throw eval.error("alpha", "must be >= 0");
  if (spec.rows.empty()) throw top.error("rows", "the sweep has no rows");
  resolve_rows(spec);
  return spec;
}

std::string row_slug(const SweepSpec& spec, std::size_t index) {
  std::string label;
  for (const char c : spec.rows.at(index).label) {
    label += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  }
  return fmt::format("{:02d}-{}", index, label);
}

}  // namespace nmt::sweep
