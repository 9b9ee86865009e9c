#pragma once
// A checkpoint's root attributes (the format: checkpoint.h): the training state and the config,
// state_sha256 over them, and the stored SentencePiece model. Used by checkpoint.cpp only.

#include <string>

#include "common/hdf5_file.h"
#include "trainer/checkpoint/checkpoint.h"

namespace nmt::checkpoint {

// Sets the format, the training state and `config` on "/", stores the SentencePiece model, and
// last state_sha256 over them all: optimizer_step must be set before.
void write_state(Hdf5Writer& h5, const TrainingState& s, const RunConfig& config);

// Opens a checkpoint and checks its format, version and state_sha256; every error names the file.
Hdf5Reader open_checkpoint(const std::string& path);

// Format 2 and later carry checksums and the vocabulary's hash.
bool has_checksums(const Hdf5File& h5);

// The training state stored in `h5`, its SentencePiece model verified against vocab_sha256. A
// file of an older format reads as this one, each field it lacks as:
//   format 1: no checksums (its tensors load unverified, with a warning); vocab_sha256 empty
//             (unknown: check_vocabulary warns)
//   format 2: no state_sha256 (the attributes are not verified)
//   format 3: no log window: an empty one (the first log line after a resume averages only the
//             updates trained since)
//   format 4: no tgt_tokens: -1 (unknown: a run resumed from it logs no train/tokens)
TrainingState read_state(const Hdf5Reader& h5);

}  // namespace nmt::checkpoint
