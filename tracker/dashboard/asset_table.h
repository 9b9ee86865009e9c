#pragma once
// The dashboard's files as built into the binary: the table that embed_assets.cmake generates at
// build time from index.html, app.js, style.css and Debian's dygraphs.

#include <cstddef>

namespace nmt::tracker::dashboard {

struct Asset {
  const char* name;           // the file's base name, e.g. "app.js"
  const unsigned char* data;  // its bytes
  std::size_t size;           // their count
};

extern const Asset kAssets[];
extern const std::size_t kAssetCount;

}  // namespace nmt::tracker::dashboard
