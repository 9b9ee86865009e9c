#pragma once
// Table cells of nmt-tracker's output for people: params exactly (a config value is read back as
// it was written), figures to a few significant digits, times in ISO 8601 UTC, texts printable().

#include <cstdint>
#include <optional>
#include <string>

#include "tracker/api/wire_types.h"

namespace nmt::tracker::cli {

// A param: a text printable(), a number in its shortest exact form ("0.1", "512").
std::string param_cell(const api::ParamValue& value);
std::string param_cell(const std::optional<api::ParamValue>& value);  // "-" when absent

// A figure (a loss, a BLEU) to `significant` digits; "-" when absent.
std::string figure_cell(const std::optional<double>& value, int significant = 4);

std::string text_cell(const std::optional<std::string>& value);    // printable(); "-" when absent
std::string count_cell(const std::optional<std::int64_t>& value);  // plain digits; "-"
std::string time_cell(const std::optional<double>& unix_seconds);  // ISO 8601 UTC; "-"

}  // namespace nmt::tracker::cli
