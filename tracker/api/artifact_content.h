#pragma once
// Which artifacts may carry their text (POST /api/runs/{run}/artifacts with "content"), and how
// the daemon serves it back (GET /api/runs/{run}/artifacts/{artifact}/content): the content type
// follows the path's extension, and the headers forbid scripts, since the text comes from whoever
// writes to the daemon and the dashboard shows it in a page of its own origin.

#include <optional>
#include <string>

namespace nmt::tracker::api {

// The content type served for an artifact at `path` (by its extension, case-insensitive):
// .md/.markdown text/markdown, .svg image/svg+xml, .json application/json, .txt/.log text/plain,
// .csv text/csv (each text type with charset=utf-8); nullopt for every other path.
std::optional<std::string> artifact_content_type(const std::string& path);

// ".md, .markdown, .svg, ...": the extensions above, for errors and docs.
std::string artifact_content_extensions();

// Sent with every artifact's content: no script runs, nothing is fetched, the document is
// sandboxed; inline styles (an SVG's) stay.
inline constexpr const char* kArtifactContentSecurityPolicy =
    "default-src 'none'; style-src 'unsafe-inline'; sandbox";

}  // namespace nmt::tracker::api
