#pragma once
// The web dashboard (tracker/API.md "Dashboard"): a single-page app served by nmt-trackerd on its
// own port. It reads the JSON API like any client; this module only hands out its files.

#include <optional>
#include <string>

#include "tracker/api/http_types.h"

namespace nmt::tracker::dashboard {
// The dashboard's files, built into the binary: "/" -> index.html; "/assets/<file>".
// nullopt when `path` is not one of them (the handler answers 404).
std::optional<Response> serve(const std::string& path);
}  // namespace nmt::tracker::dashboard
