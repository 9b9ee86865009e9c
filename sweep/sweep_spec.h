#pragma once
// A sweep spec: a base run config plus named rows, each a set of --set overrides, as the paper's
// Table 3 varies one thing at a time around the base model. YAML:
//
//   name: table3-multi30k            # the tracker's sweep name (and the default experiment)
//   experiment: table3-multi30k      # optional
//   base: ../multi30k-sweep.yaml     # run config, relative to the spec file
//   set: [train.max_steps=300]       # overrides for every row (optional)
//   average_last: 5                  # checkpoints averaged before evaluation
//   eval: {split: valid, beam: 4, alpha: 0.6, sentences: 0}  # every row alike, whatever
//                                    # its config's decode: section says
//   rows:
//     - label: base                  # the one row without overrides
//       reference: {ppl: 4.92, bleu: 25.8, params: 65}
//     - label: A
//       set: [model.heads=1, model.d_k=512, model.d_v=512]
//
// Loading checks everything before anything runs: unknown keys (in the spec and in every row's
// overrides, through the run-config loader), and rows that change nothing relative to the base.

#include <cstdint>
#include <string>
#include <vector>

#include "trainer/config/train_config.h"

namespace nmt::sweep {

struct Reference {  // the paper's figures for a row; 0: not given
  double ppl = 0, bleu = 0, params = 0;
};

struct Row {
  std::string label;
  std::vector<std::string> overrides;  // "key=value", after the spec's common ones
  Reference reference;
  RunConfig config;  // resolved: base + common + row overrides
};

struct EvalSettings {
  std::string split = "valid";
  std::int64_t beam = 4;
  double alpha = 0.6;          // every row's length penalty, whatever its config's decode.alpha
  std::int64_t sentences = 0;  // 0: the whole split
};

struct SweepSpec {
  std::string source;  // the spec file
  std::string name;
  std::string experiment;
  std::string base_config;  // absolute path
  std::vector<std::string> common_overrides;
  std::int64_t average_last = 5;
  EvalSettings eval;
  std::vector<Row> rows;
};

// Throws ConfigError naming the file, the row and the key at fault.
SweepSpec load_sweep_spec(const std::string& path);

// "03-A", "00-base": a row's directory and run-name suffix (index keeps rows with one label apart).
std::string row_slug(const SweepSpec& spec, std::size_t index);

}  // namespace nmt::sweep
