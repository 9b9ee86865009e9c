#include "trainer/train/evaluation.h"

#include <torch/utils.h>

#include <algorithm>
#include <cmath>

#include "eval/metrics/bleu.h"
#include "trainer/decode/translator.h"
#include "trainer/runtime/precision.h"
#include "trainer/train/batch_loss.h"

namespace nmt::train {

SplitScore score_split(model::Transformer& model, const data::TokenBatcher& batches,
                       double label_smoothing, runtime::Precision precision, c10::Device device,
                       const distributed::Communicator& comm) {
  torch::NoGradGuard no_grad;
  model->eval();
  at::Tensor nll_sum, loss_sum;  // 0-dim fp64, on the device: read once at the end
  std::int64_t tokens = 0;
  const auto plan = batches.sequential_plan();
  for (std::size_t i = static_cast<std::size_t>(comm.rank()); i < plan.size();
       i += static_cast<std::size_t>(comm.size())) {
    const auto batch = batches.make_batch(plan[i]);
    runtime::AutocastScope autocast(precision, device);
    const auto terms = batch_loss(model, batch.src.to(device), batch.tgt_in.to(device),
                                  batch.tgt_out.to(device), label_smoothing, precision);
    const auto nll = terms.nll.to(at::kDouble), loss = terms.smoothed.to(at::kDouble);
    nll_sum = nll_sum.defined() ? nll_sum + nll : nll;
    loss_sum = loss_sum.defined() ? loss_sum + loss : loss;
    tokens += batch.tgt_tokens;
  }
  const double nll = nll_sum.defined() ? nll_sum.item<double>() : 0.0;
  const double loss = loss_sum.defined() ? loss_sum.item<double>() : 0.0;
  model->train();
  std::vector<double> sums = {nll, loss, static_cast<double>(tokens)};
  comm.allreduce_sum(sums);
  SplitScore score;
  score.tokens = static_cast<std::int64_t>(sums[2]);
  const double denominator = std::max(sums[2], 1.0);
  score.nll = sums[0] / denominator;
  score.loss = sums[1] / denominator;
  score.ppl = std::exp(score.nll);
  return score;
}

SplitTranslations split_translations(model::Transformer& model,
                                     const preprocess::ShardDataset& data,
                                     const preprocess::Vocabulary& vocab, c10::Device device,
                                     const BleuSettings& settings) {
  const auto n = settings.sentences > 0 ? std::min(settings.sentences, data.size()) : data.size();
  SplitTranslations out;
  std::vector<std::vector<std::int64_t>> sources;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto pair = data.pair(i);
    sources.emplace_back(pair.src.begin(), pair.src.end());
    out.sources.push_back(vocab.decode(pair.src.to_vector()));
    out.references.push_back(vocab.decode(pair.tgt.to_vector()));
  }
  decode::TranslateOptions options;
  options.decode.strategy =
      settings.beam == 1 ? decode::Strategy::kGreedy : decode::Strategy::kBeam;
  options.decode.beam.beam_size = settings.beam;
  options.decode.beam.length_penalty = settings.alpha;
  options.precision = settings.precision;
  options.workers = settings.workers;
  decode::Translator translator(model, vocab, device, options);
  const auto results = translator.translate_ids(sources);
  model->train();
  for (const auto& r : results) {
    out.hypotheses.push_back(
        r.empty() ? "" : vocab.decode({r.front().tokens.begin(), r.front().tokens.end()}));
  }
  return out;
}

double split_bleu(model::Transformer& model, const preprocess::ShardDataset& data,
                  const preprocess::Vocabulary& vocab, c10::Device device,
                  const BleuSettings& settings) {
  const auto t = split_translations(model, data, vocab, device, settings);
  return eval::corpus_bleu(t.hypotheses, {t.references}, eval::BleuOptions{}).score.score;
}

}  // namespace nmt::train
