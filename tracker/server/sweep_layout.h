#pragma once
// The layout of a sweep's ablation table (GET /api/sweeps/{name}/table), chosen from the sweep's
// own runs rather than from a list of keys: the params whose values differ among the runs, then
// the results, then the paper's reference figures when the runs carry them as `reference.*`
// params (nmt-sweep sends a spec row's `reference` that way).

#include <string>
#include <vector>

#include "tracker/api/wire_types.h"
#include "tracker/store/run_store.h"

namespace nmt::tracker {

// Columns, in this order:
// - kind "param": every param (but model.parameter_count and reference.*) whose value is not the
//   same in all runs, a run without it counting as a value of its own; ordered by the first run
//   (in row order) whose value differs from the first run's, then by key. None for one run.
// - results: "params" (kind param: model.parameter_count), "dev_ppl" and "dev_bleu" (kind eval:
//   the newest "valid" eval's perplexity and BLEU), and "test_bleu" (the newest "test" eval's
//   BLEU) when any run has a test eval.
// - kind "reference": each `reference.<name>` param any run has, by name. (Older runs' `ref.<name>`
//   params count as `reference.<name>`.)
api::SweepTable sweep_table(const std::string& sweep, const std::vector<SweepRun>& runs);

}  // namespace nmt::tracker
