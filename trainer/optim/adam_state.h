#pragma once
// Where LibTorch's Adam keeps a parameter's state: its map is keyed by the parameter's TensorImpl,
// as a string in 1.x and as a pointer in later releases. Deduced from the map type, so both
// LibTorch lines compile. Used by the fused update and by checkpoints.

#include <ATen/core/Tensor.h>

#include <sstream>
#include <string>
#include <type_traits>

namespace nmt::optim {

template <typename StateMap>
typename StateMap::key_type adam_state_key(const StateMap&, const at::Tensor& param) {
  using Key = typename StateMap::key_type;
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream key;
    key << param.unsafeGetTensorImpl();
    return key.str();
  } else {
    return static_cast<Key>(param.unsafeGetTensorImpl());
  }
}

}  // namespace nmt::optim
