#pragma once
// The per-step processing of next-token scores [rows, vocab] that decoding strategies share, as
// small pure functions of the scores and each row's hypothesis so far:
//  - the repetition penalty of CTRL (Keskar et al. 2019, section 4.1) with the sign fix that the
//    common implementations use: a logit of a token already in the hypothesis is divided by the
//    penalty when positive and multiplied by it when negative (CTRL itself only divides, which
//    would raise a negative logit). Applied to the raw logits, before the softmax; only the tokens
//    decoded so far count (not the source, not BOS), each once however often it occurred;
//  - the no-repeat n-gram ban (Paulus et al. 2018): a token that would complete an n-gram already
//    in the hypothesis gets -inf;
//  - temperature, top-k (Fan et al. 2018) and top-p / nucleus (Holtzman et al. 2020) shaping of
//    the distribution that sampling draws from.
// The repetition options never touch EOS (hypotheses here never hold it); temperature, top-k and
// top-p shape EOS's probability like any other token's (top-k or top-p may cut it off).

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace nmt::decode {

// Each row's tokens so far, without BOS and EOS: one entry per row of the scores.
using Histories = std::vector<std::vector<std::int64_t>>;

// What every strategy (beam, greedy, sampling, diverse beam) applies to the model's logits.
struct RepetitionOptions {
  double penalty = 1.0;                   // CTRL's theta, >= 1 discourages repeats; 1: off
  std::int64_t no_repeat_ngram_size = 0;  // n: no n-gram occurs twice in an output; 0: off
  bool active() const { return penalty != 1.0 || no_repeat_ngram_size > 0; }
  void validate() const;  // std::invalid_argument naming the field
};

// logits [rows, vocab] -> [rows, vocab]: the repetition penalty on each row's earlier tokens.
at::Tensor apply_repetition_penalty(const at::Tensor& logits, const Histories& histories,
                                    double penalty);

// The tokens that would complete, after `tokens`, an n-gram (n >= 1) that `tokens` already holds
// (n = 1: every token in it), each once, in increasing order.
std::vector<std::int64_t> repeated_ngram_tokens(const std::vector<std::int64_t>& tokens,
                                                std::int64_t n);

// scores [rows, vocab] -> [rows, vocab] with -inf at the tokens repeated_ngram_tokens bans.
at::Tensor ban_repeated_ngrams(const at::Tensor& scores, const Histories& histories,
                               std::int64_t n);

// Both of the above, as RepetitionOptions says (the input itself when they are off): logits
// [rows, vocab] -> [rows, vocab].
at::Tensor apply_repetition_options(const at::Tensor& logits, const Histories& histories,
                                    const RepetitionOptions& options);

// scores [rows, vocab] / temperature (> 0); temperature 1 returns the input itself.
at::Tensor apply_temperature(const at::Tensor& scores, double temperature);

// scores [rows, vocab] -> [rows, vocab] with -inf outside each row's k best (k < 1 or k >= vocab:
// the input itself). Exactly k entries keep their value, ties broken by topk.
at::Tensor top_k_filter(const at::Tensor& scores, std::int64_t k);

// log_probs [rows, vocab] (normalised or not: softmax decides) -> [rows, vocab] with -inf outside
// the smallest set of most probable tokens whose probability reaches p (0 < p <= 1; p = 1: the
// input itself). The most probable token is always kept.
at::Tensor top_p_filter(const at::Tensor& log_probs, double p);

}  // namespace nmt::decode
