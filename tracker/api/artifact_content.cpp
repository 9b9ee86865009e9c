#include "tracker/api/artifact_content.h"

#include <algorithm>
#include <cctype>
#include <utility>

namespace nmt::tracker::api {
namespace {

const std::pair<const char*, const char*> kTypes[] = {
    {".md", "text/markdown; charset=utf-8"},
    {".markdown", "text/markdown; charset=utf-8"},
    {".svg", "image/svg+xml"},
    {".json", "application/json"},
    {".txt", "text/plain; charset=utf-8"},
    {".log", "text/plain; charset=utf-8"},
    {".csv", "text/csv; charset=utf-8"},
};

}  // namespace

std::optional<std::string> artifact_content_type(const std::string& path) {
  const std::size_t dot = path.rfind('.');
  const std::size_t slash = path.rfind('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return std::nullopt;
  std::string extension = path.substr(dot);
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const auto& [ext, type] : kTypes) {
    if (extension == ext) return std::string(type);
  }
  return std::nullopt;
}

std::string artifact_content_extensions() {
  std::string out;
  for (const auto& entry : kTypes) out += (out.empty() ? "" : ", ") + std::string(entry.first);
  return out;
}

}  // namespace nmt::tracker::api
