#pragma once
// A checkpoint's model for decoding, loaded one way for every tool and benchmark that translates
// with one (nmt-translate, nmt-evaluate, the CTranslate2 exporter, the decoding benchmarks): the
// model built from the checkpoint's own config, its parameters loaded and checked, in evaluation
// mode on the CPU, with the state it was saved with (the vocabulary it was trained with:
// checkpoint_vocabulary.h).

#include <string>

#include "trainer/checkpoint/checkpoint.h"
#include "trainer/config/train_config.h"
#include "trainer/model/transformer.h"

namespace nmt::checkpoint {

struct CheckpointModel {
  RunConfig config;  // the checkpoint's
  TrainingState state;
  model::Transformer model{nullptr};
};

// Throws naming the file when it is not a readable checkpoint or its tensors fail their checks.
CheckpointModel load_for_inference(const std::string& path);

}  // namespace nmt::checkpoint
