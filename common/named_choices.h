#pragma once
// The names of an enum's values, written once: parsing, printing and the list of choices in an
// error all come from one table.
//
//   constexpr NamedChoices<Precision, 2> kPrecisions{{{{Precision::kFp32, "fp32"},
//                                                    {Precision::kBf16, "bf16"}}}};
//   kPrecisions.parse("bf16", "precision")  // Precision::kBf16
//   kPrecisions.parse("x", "precision")     // std::invalid_argument:
//                                           //   unknown precision 'x' (expected fp32, bf16)

#include <array>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

namespace nmt {

template <typename Enum, std::size_t N>
struct NamedChoices {
  std::array<std::pair<Enum, const char*>, N> entries;

  Enum parse(const std::string& name, const char* what) const {
    for (const auto& [value, text] : entries) {
      if (name == text) return value;
    }
    std::string expected;
    for (const auto& entry : entries)
      expected += (expected.empty() ? "" : ", ") + std::string(entry.second);
    throw std::invalid_argument("unknown " + std::string(what) + " '" + name + "' (expected " +
                                expected + ")");
  }

  const char* name(Enum value) const {
    for (const auto& [v, text] : entries) {
      if (v == value) return text;
    }
    return "?";
  }
};

}  // namespace nmt
