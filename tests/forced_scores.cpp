// The per-token log-probabilities that a checkpoint gives reference translations (teacher forcing:
// source + EOS in, BOS + target in, target + EOS scored), printed for a comparison with another
// implementation of the same model (tests/scripts/ctranslate2_export_test.sh compares them with
// CTranslate2's score_batch on the nmt-export output). Text is encoded with the checkpoint's own
// SentencePiece model. One line per pair: "SOURCE_IDS\tTARGET_IDS\tLOG_PROBS", space-separated.
// Usage: forced_scores CHECKPOINT SOURCE_TEXT TARGET_TEXT

#include <ATen/ops/log_softmax.h>
#include <ATen/ops/tensor.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/utils.h>

#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "preprocess/vocabulary.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/model/transformer.h"

namespace {

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::int64_t> with(std::vector<std::int32_t> ids, std::int64_t front,
                               std::int64_t back) {
  std::vector<std::int64_t> out;
  if (front >= 0) out.push_back(front);
  out.insert(out.end(), ids.begin(), ids.end());
  if (back >= 0) out.push_back(back);
  return out;
}

std::string joined(const std::vector<std::int32_t>& ids) {
  return fmt::format("{}", fmt::join(ids, " "));
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc != 4) {
    std::cerr << "usage: forced_scores CHECKPOINT SOURCE_TEXT TARGET_TEXT\n";
    return 2;
  }
  const std::string path = argv[1];
  const auto config = nmt::checkpoint::CheckpointReader(path).config();
  nmt::model::Transformer model(config.model);
  const auto state = nmt::checkpoint::load_checkpoint(path, *model, nullptr, config);
  const auto vocab = nmt::preprocess::Vocabulary::from_serialized(state.vocab_model, path);
  model->eval();
  torch::NoGradGuard no_grad;
  const auto sources = read_lines(argv[2]);
  const auto targets = read_lines(argv[3]);
  if (sources.size() != targets.size()) throw std::runtime_error("line counts differ");
  using nmt::preprocess::kBosId;
  using nmt::preprocess::kEosId;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const auto src_ids = vocab.encode(sources[i]);
    const auto tgt_ids = vocab.encode(targets[i]);
    const auto src = at::tensor(with(src_ids, -1, kEosId)).unsqueeze(0);     // [1, S + 1]
    const auto tgt_in = at::tensor(with(tgt_ids, kBosId, -1)).unsqueeze(0);  // [1, T + 1]
    const auto gold = at::tensor(with(tgt_ids, -1, kEosId)).unsqueeze(0);    // [1, T + 1]
    const auto log_probs =
        at::log_softmax(model->forward(src, tgt_in), -1).gather(2, gold.unsqueeze(2));
    const auto scores = log_probs.flatten().contiguous();  // [T + 1]
    std::vector<float> values(scores.data_ptr<float>(), scores.data_ptr<float>() + scores.numel());
    std::cout << joined(src_ids) << '\t' << joined(tgt_ids) << '\t'
              << fmt::format("{:.6f}", fmt::join(values, " ")) << '\n';
  }
  return 0;
} catch (const std::exception& e) {
  std::cerr << "forced_scores: " << e.what() << "\n";
  return 1;
}
