#pragma once
// The SentencePiece model to translate a checkpoint with, found one way for every tool that
// decodes (nmt-translate, nmt-evaluate, the CTranslate2 exporter): the one named by the user,
// else the one the checkpoint carries, else the spm.model of the data folder, for a checkpoint
// that carries none. Whichever it is must be the one the checkpoint was trained with (the hash
// it records) and have the model's vocabulary size.

#include <string>

#include "preprocess/vocabulary.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/config/train_config.h"

namespace nmt::checkpoint {

struct VocabularySource {
  std::string spm_model;  // given by the user (--spm-model); empty: none
  std::string data_dir;   // the data folder to fall back on; empty: the config's data.dir
};

// std::runtime_error naming the checkpoint when no model is found, and naming both files when they
// disagree (check_vocabulary's hash, or the vocabulary size).
preprocess::Vocabulary checkpoint_vocabulary(const std::string& checkpoint,
                                             const TrainingState& state, const RunConfig& config,
                                             const VocabularySource& source);

}  // namespace nmt::checkpoint
