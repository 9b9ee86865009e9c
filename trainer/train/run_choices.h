#pragma once
// What a run fixes when it starts and keeps across resumes, resolved in its config (and so in
// config.yaml, checkpoints and the tracker's params): the precision it trains in (auto decided
// on this device, agreed by every rank) and the size of its update in batches (the same on any
// number of ranks).

#include <c10/core/Device.h>

#include "trainer/config/train_config.h"
#include "trainer/distributed/communicator.h"
#include "trainer/runtime/precision.h"

namespace nmt::train {

// Resolves config.train.precision and returns it with the reason for it (logged by rank 0, and
// the run's provenance). `stored`: the config of the checkpoint a resumed run continues (nullptr
// for a fresh run). Every rank calls it (a collective when auto).
runtime::PrecisionChoice choose_precision(RunConfig& config, const RunConfig* stored,
                                          const c10::Device& device,
                                          const distributed::Communicator& comm);

// Resolves config.train.update_batches and sets config.train.accumulation to this rank's share.
// Throws std::invalid_argument, naming the field, when the ranks cannot share the update evenly.
void choose_update_batches(RunConfig& config, const RunConfig* stored,
                           const distributed::Communicator& comm);

}  // namespace nmt::train
