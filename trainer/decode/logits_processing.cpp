#include "trainer/decode/logits_processing.h"

#include <ATen/ops/cat.h>
#include <ATen/ops/full_like.h>
#include <ATen/ops/softmax.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros_like.h>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace nmt::decode {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// Flat indices row * vocab + token [pairs] int64 on `device` of each row's `tokens_of(row)`.
template <typename TokensOf>
at::Tensor flat_indices(std::size_t rows, std::int64_t vocab, const at::Device& device,
                        TokensOf tokens_of) {
  std::vector<std::int64_t> flat;
  for (std::size_t r = 0; r < rows; ++r) {
    for (const auto token : tokens_of(r)) {
      if (token >= 0 && token < vocab) flat.push_back(static_cast<std::int64_t>(r) * vocab + token);
    }
  }
  return at::tensor(flat, at::TensorOptions().dtype(at::kLong)).to(device);
}

void check_rows(const at::Tensor& scores, const Histories& histories, const char* what) {
  TORCH_CHECK(scores.dim() == 2 && scores.size(0) == static_cast<std::int64_t>(histories.size()),
              what, " takes scores [rows, vocab] and one history per row, got ", scores.sizes(),
              " and ", histories.size(), " histories");
}

}  // namespace

void RepetitionOptions::validate() const {
  if (!(penalty > 0))
    throw std::invalid_argument("repetition.penalty must be positive (1: off), got " +
                                std::to_string(penalty));
  if (no_repeat_ngram_size < 0)
    throw std::invalid_argument("repetition.no_repeat_ngram_size must be >= 0 (0: off), got " +
                                std::to_string(no_repeat_ngram_size));
}

at::Tensor apply_repetition_penalty(const at::Tensor& logits, const Histories& histories,
                                    double penalty) {
  check_rows(logits, histories, "apply_repetition_penalty");
  if (penalty == 1.0) return logits;
  const auto flat = flat_indices(histories.size(), logits.size(1), logits.device(), [&](auto r) {
    auto unique = histories[r];
    std::sort(unique.begin(), unique.end());
    unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
    return unique;
  });
  if (flat.numel() == 0) return logits;
  auto out = logits.contiguous().clone();                  // [rows, vocab]
  const auto picked = out.view(-1).index_select(0, flat);  // [pairs]
  out.view(-1).index_copy_(0, flat, at::where(picked > 0, picked / penalty, picked * penalty));
  return out;
}

std::vector<std::int64_t> repeated_ngram_tokens(const std::vector<std::int64_t>& tokens,
                                                std::int64_t n) {
  std::vector<std::int64_t> banned;
  const auto length = static_cast<std::int64_t>(tokens.size());
  if (n < 1 || length < n) return banned;
  // The n - 1 tokens the next one would follow, against every earlier n-gram's first n - 1.
  const auto context = tokens.end() - (n - 1);
  for (std::int64_t start = 0; start + n <= length; ++start) {
    const auto first = tokens.begin() + start;
    if (std::equal(first, first + (n - 1), context, tokens.end())) banned.push_back(first[n - 1]);
  }
  std::sort(banned.begin(), banned.end());
  banned.erase(std::unique(banned.begin(), banned.end()), banned.end());
  return banned;
}

at::Tensor ban_repeated_ngrams(const at::Tensor& scores, const Histories& histories,
                               std::int64_t n) {
  check_rows(scores, histories, "ban_repeated_ngrams");
  if (n < 1) return scores;
  const auto flat = flat_indices(histories.size(), scores.size(1), scores.device(),
                                 [&](auto r) { return repeated_ngram_tokens(histories[r], n); });
  if (flat.numel() == 0) return scores;
  auto out = scores.contiguous().clone();  // [rows, vocab]
  out.view(-1).index_fill_(0, flat, kNegInf);
  return out;
}

at::Tensor apply_repetition_options(const at::Tensor& logits, const Histories& histories,
                                    const RepetitionOptions& options) {
  const auto penalised = apply_repetition_penalty(logits, histories, options.penalty);
  return ban_repeated_ngrams(penalised, histories, options.no_repeat_ngram_size);
}

at::Tensor apply_temperature(const at::Tensor& scores, double temperature) {
  TORCH_CHECK(temperature > 0, "temperature must be positive, got ", temperature);
  if (temperature == 1.0) return scores;
  return scores / temperature;
}

at::Tensor top_k_filter(const at::Tensor& scores, std::int64_t k) {
  TORCH_CHECK(scores.dim() == 2, "top_k_filter takes [rows, vocab], got ", scores.sizes());
  if (k < 1 || k >= scores.size(1)) return scores;
  const auto kept = std::get<1>(scores.topk(k, 1));  // [rows, k]
  return at::full_like(scores, kNegInf).scatter(1, kept, scores.gather(1, kept));
}

at::Tensor top_p_filter(const at::Tensor& log_probs, double p) {
  TORCH_CHECK(log_probs.dim() == 2, "top_p_filter takes [rows, vocab], got ", log_probs.sizes());
  TORCH_CHECK(p > 0 && p <= 1, "top_p must be in (0, 1], got ", p);
  if (p >= 1.0) return log_probs;
  const auto [sorted, order] = log_probs.sort(1, /*descending=*/true);  // [rows, vocab] each
  const auto mass = at::softmax(sorted.to(at::kDouble), 1).cumsum(1);   // [rows, vocab]
  // The probability before each token: a token is kept while that is still short of p.
  const auto before =
      at::cat({at::zeros_like(mass.narrow(1, 0, 1)), mass.narrow(1, 0, mass.size(1) - 1)},
              1);  // [rows, vocab]
  const auto kept = at::where(before < p, sorted, at::full_like(sorted, kNegInf));
  return at::full_like(log_probs, kNegInf).scatter(1, order, kept);
}

}  // namespace nmt::decode
