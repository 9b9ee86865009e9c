#pragma once
// Checkpoint averaging (paper section 6.1: the last 5 checkpoints for base models, the last 20
// for big ones). Parameters are averaged element-wise as a running mean in float32, reading one
// tensor of one checkpoint at a time: memory holds the mean (one model) and one tensor, whatever K,
// and the average is written as every checkpoint is, in bounded memory.

#include <cstdint>
#include <string>
#include <vector>

#include "trainer/checkpoint/checkpoint.h"

namespace nmt::checkpoint {

// The newest `count` step checkpoints of a run directory, oldest first; throws when it has fewer,
// and, naming the files, when one was written by a run other than `run_uid` (the directory's
// run.json; empty: unknown) or than the others (a file without a uid matches any).
std::vector<std::string> last_checkpoints(const std::string& run_dir, std::int64_t count,
                                          const std::string& run_uid = "");

// Averages `inputs` into `output` (a checkpoint nmt-translate and nmt-train load, without
// optimizer state, averaged_from = inputs.size(), step = the newest input's). Refuses inputs of
// different model configs, parameter shapes or vocabularies, and corrupt or non-finite inputs,
// naming the files; never writes a non-finite average. Returns the state written (its SentencePiece
// model left out).
TrainingState average_checkpoints(const std::vector<std::string>& inputs,
                                  const std::string& output);

}  // namespace nmt::checkpoint
