#pragma once
// The SGML pairing of corpus_reader.h (internal to nmt_preprocess; use open_corpus).

#include <memory>
#include <string>

#include "preprocess/corpus_reader.h"

namespace nmt::preprocess {

std::unique_ptr<PairReader> open_sgml_pair(const std::string& source, const std::string& reference);

}  // namespace nmt::preprocess
