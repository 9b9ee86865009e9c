#pragma once
// The names of an enum's values, written once: parsing, printing and the list of choices in an
// error all come from one table.
//
//   constexpr NamedChoices<Precision, 2> kPrecisions{{{{Precision::kFp32, "fp32"},
//                                                    {Precision::kBf16, "bf16"}}}};
//   kPrecisions.parse("bf16", "precision")  // Precision::kBf16
//   kPrecisions.parse("x", "precision")     // std::invalid_argument:
//                                           //   unknown precision 'x' (expected fp32, bf16)
//   kPrecisions.name(Precision::kBf16)      // "bf16"

#include <array>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

namespace nmt {

template <typename Enum, std::size_t N>
struct NamedChoices {
  std::array<std::pair<Enum, const char*>, N> entries;

  Enum parse(const std::string& name, const char* what) const {
    if (const std::optional<Enum> value = find(name)) return *value;
    throw std::invalid_argument("unknown " + std::string(what) + " '" + name + "' (expected " +
                                names() + ")");
  }

  // The value named `name`, or nullopt.
  std::optional<Enum> find(const std::string& name) const {
    for (const auto& [value, text] : entries) {
      if (name == text) return value;
    }
    return std::nullopt;
  }

  // The names, in order: "fp32, bf16".
  std::string names() const {
    std::string list;
    for (const auto& entry : entries)
      list += (list.empty() ? "" : ", ") + std::string(entry.second);
    return list;
  }

  const char* name(Enum value) const {
    for (const auto& [v, text] : entries) {
      if (v == value) return text;
    }
    return "?";
  }
};

}  // namespace nmt
