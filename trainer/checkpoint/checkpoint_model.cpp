#include "trainer/checkpoint/checkpoint_model.h"

namespace nmt::checkpoint {

CheckpointModel load_for_inference(const std::string& path) {
  const CheckpointReader reader(path);
  CheckpointModel loaded{reader.config(), reader.state(),
                         model::Transformer(reader.config().model)};
  reader.load(*loaded.model, nullptr, loaded.config);
  loaded.model->eval();
  return loaded;
}

}  // namespace nmt::checkpoint
