#pragma once
// The bearer token as both sides read it from a file (nmt-trackerd --token-file; a client's
// --token-file, tracker.token_file or NMT_TRACKER_TOKEN_FILE): the whole file with the blanks
// around it (spaces, tabs, CR, LF) dropped, so a token written by `echo` or an editor matches.

#include <string>
#include <string_view>

namespace nmt::tracker::api {

// `text` without the spaces, tabs, CRs and LFs around it.
std::string trim_blanks(std::string_view text);

// The token in `path`. Throws std::runtime_error naming the file and `named_by` (the flag, config
// key or environment variable that named it) when it cannot be read or holds only blanks.
std::string read_token_file(const std::string& path, const std::string& named_by);

}  // namespace nmt::tracker::api
