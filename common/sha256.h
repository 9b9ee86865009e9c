#pragma once
// SHA-256 (OpenSSL) as lowercase hex: vocabulary models and shard files are identified by it.

#include <string>

namespace nmt {

std::string sha256_hex(const std::string& bytes);
// Streams the file; throws std::runtime_error naming it when it cannot be read.
std::string sha256_file(const std::string& path);

}  // namespace nmt
