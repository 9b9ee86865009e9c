// The dashboard's files, looked up by URL path in the table built into the binary
// (asset_table.h). Nothing here reads the disk, so the daemon serves the same page wherever it
// runs.

#include "tracker/dashboard/dashboard.h"

#include <string_view>

#include "tracker/dashboard/asset_table.h"

namespace nmt::tracker::dashboard {
namespace {

constexpr std::string_view kAssetPrefix = "/assets/";
constexpr const char* kSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'";

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

std::string content_type(std::string_view name) {
  if (ends_with(name, ".html")) {
    return "text/html; charset=utf-8";
  }
  if (ends_with(name, ".js")) {
    return "text/javascript";
  }
  if (ends_with(name, ".css")) {
    return "text/css";
  }
  return "application/octet-stream";
}

const Asset* find_asset(std::string_view name) {
  for (std::size_t i = 0; i < kAssetCount; ++i) {
    if (name == kAssets[i].name) {
      return &kAssets[i];
    }
  }
  return nullptr;
}

}  // namespace

std::optional<Response> serve(const std::string& path) {
  std::string_view name;
  if (path == "/" || path == "/index.html") {
    name = "index.html";
  } else if (path.compare(0, kAssetPrefix.size(), kAssetPrefix) == 0) {
    // Names are matched whole against the table, so "/assets/../x" can name nothing else.
    name = std::string_view(path).substr(kAssetPrefix.size());
  } else {
    return std::nullopt;
  }
  const Asset* asset = find_asset(name);
  if (asset == nullptr) {
    return std::nullopt;
  }
  Response response(200, std::string(reinterpret_cast<const char*>(asset->data), asset->size),
                    content_type(name));
  // Only this daemon's own files may run or be fetched, whatever a run's name holds. Styles may
  // be inline: dygraphs writes its legend as HTML with style attributes.
  response.headers.emplace_back("Content-Security-Policy", kSecurityPolicy);
  response.headers.emplace_back("X-Content-Type-Options", "nosniff");
  // Revalidated each time, so that a rebuilt daemon's page is never mixed with an old script.
  response.headers.emplace_back("Cache-Control", "no-cache");
  return response;
}

}  // namespace nmt::tracker::dashboard
