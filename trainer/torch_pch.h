#pragma once
// The precompiled header of every target that uses LibTorch. Only the narrow headers the trainer
// needs: <torch/torch.h> would add autograd functions, datasets, serialization and JIT for nothing.
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <torch/cuda.h>
#include <torch/types.h>
