#pragma once
// Decoding runs a model in eval mode (no dropout) and gives it back as it found it: the training
// flag is restored when the scope ends, also when decoding throws, so a validation that fails
// never leaves training running without dropout.

#include <torch/nn/module.h>

namespace nmt::decode {

class EvalModeScope {
 public:
  explicit EvalModeScope(torch::nn::Module& module)
      : module_(module), was_training_(module.is_training()) {
    module_.eval();
  }
  ~EvalModeScope() {
    if (was_training_) module_.train();
  }
  EvalModeScope(const EvalModeScope&) = delete;
  EvalModeScope& operator=(const EvalModeScope&) = delete;

 private:
  torch::nn::Module& module_;
  bool was_training_;
};

}  // namespace nmt::decode
