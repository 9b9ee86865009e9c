#pragma once
// The precompiled header of every target that uses LibTorch. Only the narrow headers the trainer
// needs: <torch/torch.h> would add datasets, serialization, JIT and every module for nothing.
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <torch/cuda.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/optim/adam.h>
#include <torch/types.h>
