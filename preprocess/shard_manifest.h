#pragma once
// manifest.json's pieces that the shard writer and reader share with it (the format and the
// manifest's API: shard_format.h).

#include <nlohmann/json.hpp>
#include <string>

#include "preprocess/cleaning.h"
#include "preprocess/shard_format.h"

namespace nmt::preprocess {

// A split's cleaning counts as JSON, as manifest.json and each shard's "cleaning" attribute hold
// them.
nlohmann::json cleaning_to_json(const CleaningStats& stats);

// Throws std::runtime_error naming `path` when its SHA-256 is not the one the manifest records.
void check_shard_sha256(const std::string& path, const ShardInfo& info);

}  // namespace nmt::preprocess
