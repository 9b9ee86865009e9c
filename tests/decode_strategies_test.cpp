// Decoding strategies beside beam search: the logits processors on hand-made scores (n-gram ban,
// repetition penalty, temperature, top-k, top-p), option validation, sampling (reproducible for a
// seed, top-k 1 is greedy, each sample's score is the model's log-probability of it), diverse beam
// search (one group is beam search exactly, groups under a large penalty part at the first token)
// and the repetition options on a model made to repeat one token, for every strategy.

#include <ATen/ops/allclose.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/isinf.h>
#include <ATen/ops/log_softmax.h>
#include <ATen/ops/rand.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/zeros.h>
#include <torch/utils.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "preprocess/vocabulary.h"
#include "test_utils.h"
#include "tests/tiny_decoding.h"
#include "trainer/decode/beam_search.h"
#include "trainer/decode/decode.h"
#include "trainer/decode/diverse_beam.h"
#include "trainer/decode/greedy.h"
#include "trainer/decode/logits_processing.h"
#include "trainer/decode/sampling.h"
#include "trainer/model/transformer.h"

namespace nmt::decode {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<std::int64_t> row_values(const at::Tensor& row) {
  const auto r = row.to(at::kLong).contiguous();
  return {r.data_ptr<std::int64_t>(), r.data_ptr<std::int64_t>() + r.numel()};
}

// --- Logits processors -------------------------------------------------------------------------

TEST(LogitsProcessing, RepeatedNgramTokensAreThoseCompletingAnEarlierNgram) {
  using Ids = std::vector<std::int64_t>;
  EXPECT_EQ(repeated_ngram_tokens({5, 6, 7, 5, 6}, 3), Ids{7});  // "5 6 7" again
  EXPECT_EQ(repeated_ngram_tokens({5, 6, 7, 5, 6}, 2), Ids{7});  // "6 7" again
  EXPECT_EQ(repeated_ngram_tokens({5, 6, 5, 8, 5}, 2), (Ids{6, 8}));
  EXPECT_EQ(repeated_ngram_tokens({9, 4, 9}, 1), (Ids{4, 9}));  // every token seen
  EXPECT_TRUE(repeated_ngram_tokens({5, 6}, 3).empty());        // too short for a trigram
  EXPECT_TRUE(repeated_ngram_tokens({1, 2, 3, 4}, 2).empty());
  EXPECT_TRUE(repeated_ngram_tokens({5, 5, 5}, 0).empty());  // off
}

TEST(LogitsProcessing, BannedNgramGetsMinusInfAndNothingElseChanges) {
  const auto scores = at::arange(20, at::TensorOptions().dtype(at::kFloat)).reshape({2, 10});
  const Histories histories{{5, 6, 7, 5, 6}, {1, 2}};
  const auto out = ban_repeated_ngrams(scores, histories, 2);  // [2, 10]
  EXPECT_EQ(out[0][7].item<float>(), -kInf);
  const auto banned = at::isinf(out);
  EXPECT_EQ(banned.sum().item<std::int64_t>(), 1);
  EXPECT_TRUE(at::equal(out.masked_fill(banned, 0), scores.masked_fill(banned, 0)));
  EXPECT_TRUE(at::equal(ban_repeated_ngrams(scores, histories, 0), scores));
}

TEST(LogitsProcessing, RepetitionPenaltyDividesPositiveAndMultipliesNegativeLogits) {
  const auto logits = at::tensor(std::vector<float>{2.0f, -1.0f, 0.5f, 4.0f,  //
                                                    2.0f, -1.0f, 0.5f, 4.0f})
                          .reshape({2, 4});
  const Histories histories{{0, 1, 1, 0}, {}};  // repeats count once
  const auto out = apply_repetition_penalty(logits, histories, 2.0);
  EXPECT_EQ(row_values(out[0].mul(2)), (std::vector<std::int64_t>{2, -4, 1, 8}));
  EXPECT_TRUE(at::equal(out[1], logits[1]));  // nothing decoded yet: untouched
  EXPECT_TRUE(at::equal(apply_repetition_penalty(logits, histories, 1.0), logits));
}

TEST(LogitsProcessing, TemperatureOneIsTheIdentity) {
  torch::manual_seed(1);
  const auto scores = at::rand({3, 7});
  EXPECT_TRUE(at::equal(apply_temperature(scores, 1.0), scores));
  EXPECT_TRUE(at::allclose(apply_temperature(scores, 2.0), scores / 2));
}

TEST(LogitsProcessing, TopKKeepsExactlyTheKBest) {
  torch::manual_seed(2);
  const auto scores = at::rand({4, 30});
  const auto out = top_k_filter(scores, 5);
  for (std::int64_t r = 0; r < 4; ++r) {
    const auto kept = out[r].isfinite();
    EXPECT_EQ(kept.sum().item<std::int64_t>(), 5);
    const auto best = std::get<0>(scores[r].topk(5));
    EXPECT_TRUE(at::equal(std::get<0>(out[r].masked_select(kept).sort(0, true)), best));
  }
  // Ties at the k-th value still keep exactly k.
  const auto ties = at::zeros({2, 6});
  EXPECT_EQ(top_k_filter(ties, 3).isfinite().sum(1).sum().item<std::int64_t>(), 6);
  EXPECT_TRUE(at::equal(top_k_filter(scores, 0), scores));   // off
  EXPECT_TRUE(at::equal(top_k_filter(scores, 30), scores));  // all
}

TEST(LogitsProcessing, TopPKeepsTheSmallestSetReachingP) {
  // Probabilities 0.5, 0.3, 0.15, 0.05 in a shuffled order.
  const auto probs = at::tensor(std::vector<double>{0.15, 0.5, 0.05, 0.3}).reshape({1, 4});
  const auto log_probs = probs.log().to(at::kFloat);
  const auto kept = [&](double p) {
    const auto finite = top_p_filter(log_probs, p)[0].isfinite();
    std::vector<std::int64_t> ids;
    for (std::int64_t i = 0; i < 4; ++i) {
      if (finite[i].item<bool>()) ids.push_back(i);
    }
    return ids;
  };
  using Ids = std::vector<std::int64_t>;
  EXPECT_EQ(kept(0.4), Ids{1});              // the top token alone reaches 0.4
  EXPECT_EQ(kept(0.75), (Ids{1, 3}));        // 0.5 + 0.3
  EXPECT_EQ(kept(0.85), (Ids{0, 1, 3}));     // + 0.15
  EXPECT_EQ(kept(0.99), (Ids{0, 1, 2, 3}));  // all
  EXPECT_EQ(kept(1.0), (Ids{0, 1, 2, 3}));   // off
  const auto filtered = top_p_filter(log_probs, 0.75);
  EXPECT_EQ(filtered[0][1].item<float>(), log_probs[0][1].item<float>());  // values kept as is
}

TEST(DecodeOptions, ValidateNamesTheField) {
  EXPECT_NO_THROW(DecodeOptions{}.validate());
  DecodeOptions o;
  o.sampling.top_p = 1.5;
  NMT_EXPECT_THROW_WITH(o.validate(), std::invalid_argument, "sampling.top_p");
  o = {};
  o.sampling.temperature = 0;
  NMT_EXPECT_THROW_WITH(o.validate(), std::invalid_argument, "sampling.temperature", "greedy");
  o = {};
  o.strategy = Strategy::kDiverseBeam;
  o.diverse.groups = 3;
  NMT_EXPECT_THROW_WITH(o.validate(), std::invalid_argument, "diverse.groups", "divide");
  o = {};
  o.strategy = Strategy::kGreedy;
  o.nbest = 2;
  NMT_EXPECT_THROW_WITH(o.validate(), std::invalid_argument, "nbest", "greedy");
  o = {};
  o.strategy = Strategy::kSample;
  o.nbest = 3;
  o.sampling.num_samples = 2;
  NMT_EXPECT_THROW_WITH(o.validate(), std::invalid_argument, "nbest", "sampling.num_samples");
  o = {};
  o.beam.nbest = 2;
  NMT_EXPECT_THROW_WITH(o.validate(), std::invalid_argument, "beam.nbest");
  o = {};
  o.repetition.no_repeat_ngram_size = -1;
  NMT_EXPECT_THROW_WITH(o.validate(), std::invalid_argument, "repetition.no_repeat_ngram_size");
  EXPECT_EQ(kStrategies.parse("diverse-beam", "strategy"), Strategy::kDiverseBeam);
  NMT_EXPECT_THROW_WITH(kStrategies.parse("topk", "strategy"), std::invalid_argument, "beam",
                        "greedy", "sample");
}

// --- Sampling ----------------------------------------------------------------------------------

DecodeOptions sampling_options(std::uint64_t seed, std::int64_t samples) {
  DecodeOptions o;
  o.strategy = Strategy::kSample;
  o.sampling.seed = seed;
  o.sampling.num_samples = samples;
  o.nbest = samples;
  o.beam.max_length_offset = 12;
  return o;
}

std::vector<std::vector<std::int64_t>> all_tokens(
    const std::vector<std::vector<Hypothesis>>& results) {
  std::vector<std::vector<std::int64_t>> out;
  for (const auto& nbest : results) {
    for (const auto& h : nbest) out.push_back(h.tokens);
  }
  return out;
}

TEST(Sampling, TheSameSeedGivesTheSameSamples) {
  auto m = random_model(21);
  auto o = sampling_options(7, 4);
  o.sampling.top_k = 10;
  o.sampling.top_p = 0.9;
  o.sampling.temperature = 1.3;
  const auto first = decode(m, sources(), o);
  torch::manual_seed(12345);  // the global generator plays no part
  const auto second = decode(m, sources(), o);
  ASSERT_EQ(first.size(), 3u);
  for (std::size_t b = 0; b < first.size(); ++b) {
    ASSERT_EQ(first[b].size(), 4u);
    for (std::size_t i = 0; i < first[b].size(); ++i) {
      EXPECT_EQ(first[b][i].tokens, second[b][i].tokens);
      EXPECT_EQ(first[b][i].log_prob, second[b][i].log_prob);
    }
  }
}

// A caller's generator continues one stream across calls; seeded like the call's own, its first
// call draws the same samples.
TEST(Sampling, ACallersGeneratorContinuesOneStream) {
  auto m = random_model(26);
  const auto o = sampling_options(9, 2);
  auto generator = seeded_generator(at::Device(at::kCPU), 9);
  const auto first = all_tokens(decode(m, sources(), o, &generator));
  const auto second = all_tokens(decode(m, sources(), o, &generator));
  EXPECT_EQ(first, all_tokens(decode(m, sources(), o)));
  EXPECT_NE(first, second);
}

TEST(Sampling, DifferentSeedsGiveDifferentSamples) {
  auto m = random_model(22);
  const auto a = all_tokens(decode(m, sources(), sampling_options(1, 4)));
  const auto b = all_tokens(decode(m, sources(), sampling_options(2, 4)));
  EXPECT_NE(a, b);
  // Samples of one sentence differ among themselves too (12 samples of a flat random model).
  std::set<std::vector<std::int64_t>> distinct(a.begin(), a.end());
  EXPECT_GT(distinct.size(), 6u);
}

TEST(Sampling, TopKOneIsGreedy) {
  for (std::uint64_t seed : {23, 24}) {
    auto m = random_model(seed);
    auto o = sampling_options(seed, 1);
    o.sampling.top_k = 1;
    o.sampling.temperature = 1.7;  // irrelevant with one candidate
    const auto sampled = decode(m, sources(), o);
    o.strategy = Strategy::kGreedy;
    const auto greedy = decode(m, sources(), o);
    for (std::size_t b = 0; b < greedy.size(); ++b) {
      ASSERT_EQ(sampled[b].size(), 1u);
      EXPECT_EQ(sampled[b][0].tokens, greedy[b][0].tokens) << "seed " << seed << " row " << b;
      EXPECT_EQ(sampled[b][0].log_prob, greedy[b][0].log_prob);
    }
  }
}

// Each sample ends at EOS or at its length cap, and its log_prob is the model's log-probability
// of it (EOS included when it ended there) under full recomputation; nbest is sorted by score.
TEST(Sampling, SamplesEndAtEosOrTheCapAndScoreAsTheModelSays) {
  auto m = random_model(25);
  auto o = sampling_options(5, 6);
  o.beam.max_length_offset = 4;  // short caps, so that some samples reach them
  const auto src = sources();
  const auto results = decode(m, src, o);
  const auto caps = output_length_limits(m, src, o.beam.max_length_offset);
  torch::NoGradGuard no_grad;
  int capped = 0, ended = 0;
  for (std::int64_t b = 0; b < 3; ++b) {
    const auto& nbest = results[static_cast<std::size_t>(b)];
    const auto cap = caps[static_cast<std::size_t>(b)];
    const auto row = src[b].unsqueeze(0).narrow(1, 0, src[b].ne(0).sum().item<std::int64_t>());
    for (std::size_t i = 0; i < nbest.size(); ++i) {
      const auto& h = nbest[i];
      if (i > 0) {
        EXPECT_GE(nbest[i - 1].score, h.score);
      }
      const auto length = static_cast<std::int64_t>(h.tokens.size());
      ASSERT_LE(length, cap);
      std::vector<std::int64_t> tgt{preprocess::kBosId};
      tgt.insert(tgt.end(), h.tokens.begin(), h.tokens.end());
      const auto log_probs =
          at::log_softmax(m->forward(row, at::tensor(tgt).unsqueeze(0))[0].to(at::kDouble), -1);
      double expected = 0.0;
      for (std::int64_t t = 0; t < length; ++t)
        expected += log_probs[t][h.tokens[static_cast<std::size_t>(t)]].item<double>();
      if (length < cap) {
        expected += log_probs[length][preprocess::kEosId].item<double>();
        ++ended;
      } else {
        ++capped;
      }
      EXPECT_NEAR(h.log_prob, expected, 1e-3) << "row " << b << " sample " << i;
      EXPECT_NEAR(h.score, h.log_prob / length_penalty(length + 1, o.beam.length_penalty), 1e-9);
    }
  }
  EXPECT_GT(capped, 0);  // both endings were exercised
  EXPECT_GT(ended, 0);
}

// --- Diverse beam search -----------------------------------------------------------------------

TEST(DiverseBeam, OneGroupIsBeamSearchExactly) {
  for (std::uint64_t seed : {31, 32, 33}) {
    auto m = random_model(seed);
    DecodeOptions o;
    o.strategy = Strategy::kDiverseBeam;
    o.diverse.groups = 1;
    o.diverse.diversity_penalty = 5.0;  // no earlier group to penalise against
    o.nbest = 4;
    o.beam.max_length_offset = 10;
    const auto diverse = decode(m, sources(), o);
    BeamOptions beam = o.beam;
    beam.nbest = 4;
    const auto plain = beam_search(m, sources(), beam);
    ASSERT_EQ(diverse.size(), plain.size());
    for (std::size_t b = 0; b < plain.size(); ++b) {
      ASSERT_EQ(diverse[b].size(), plain[b].size());
      for (std::size_t i = 0; i < plain[b].size(); ++i) {
        EXPECT_EQ(diverse[b][i].tokens, plain[b][i].tokens);
        EXPECT_EQ(diverse[b][i].log_prob, plain[b][i].log_prob);
        EXPECT_EQ(diverse[b][i].score, plain[b][i].score);
      }
    }
  }
}

TEST(DiverseBeam, UnderALargePenaltyTheGroupsStartDifferently) {
  auto m = random_model(34);
  DecodeOptions o;
  o.strategy = Strategy::kDiverseBeam;
  o.diverse.groups = 4;  // one beam per group
  o.diverse.diversity_penalty = 1e3;
  o.beam.max_length_offset = 8;
  const auto per_group = grouped_beam_search(m, sources(), o.beam, 4, 1e3, {});
  for (const auto& groups : per_group) {
    ASSERT_EQ(groups.size(), 4u);
    // The first tokens of each group's hypotheses (EOS for an empty one), no two groups sharing
    // one: a token chosen at step 0 by a group costs every later group 1e3.
    std::multiset<std::int64_t> firsts;
    for (const auto& group : groups) {
      ASSERT_FALSE(group.empty());
      std::set<std::int64_t> own;
      for (const auto& h : group)
        own.insert(h.tokens.empty() ? std::int64_t{preprocess::kEosId} : h.tokens.front());
      firsts.insert(own.begin(), own.end());
    }
    for (const auto token : firsts) EXPECT_EQ(firsts.count(token), 1u) << token;
  }
  // Without the penalty every group of one beam is the same greedy search.
  const auto same = grouped_beam_search(m, sources(), o.beam, 4, 0.0, {});
  for (const auto& groups : same) {
    for (const auto& group : groups) {
      ASSERT_EQ(group.size(), groups.front().size());
      EXPECT_EQ(group.front().tokens, groups.front().front().tokens);
    }
  }
  // The n-best list puts each group's best first.
  o.nbest = 4;
  for (const auto& nbest : decode(m, sources(), o)) {
    ASSERT_EQ(nbest.size(), 4u);
    std::set<std::int64_t> firsts;
    for (const auto& h : nbest)
      firsts.insert(h.tokens.empty() ? std::int64_t{preprocess::kEosId} : h.tokens.front());
    EXPECT_EQ(firsts.size(), 4u);
    for (std::size_t i = 1; i < nbest.size(); ++i) EXPECT_GE(nbest[i - 1].score, nbest[i].score);
  }
}

TEST(DiverseBeam, NbestTakesEachGroupsBestFirst) {
  const auto h = [](std::int64_t token, double score) { return Hypothesis{{token}, score, score}; };
  const auto nbest = diverse_nbest({{h(1, -1.0), h(2, -0.5)}, {h(3, -3.0)}, {}, {h(4, -2.0)}}, 4);
  std::vector<std::int64_t> order;
  for (const auto& x : nbest) order.push_back(x.tokens.front());
  EXPECT_EQ(order, (std::vector<std::int64_t>{2, 4, 3, 1}));
  EXPECT_EQ(diverse_nbest({{h(1, -1.0), h(2, -0.5)}}, 1).front().tokens.front(), 2);
}

// --- Repetition options ------------------------------------------------------------------------

constexpr std::int64_t kFavoured = 20;

// A random model whose last decoder layer's output bias points at token kFavoured's output
// embedding: it says kFavoured at almost every step, whatever came before.
model::Transformer repeating_model() {
  auto m = random_model(41);
  torch::NoGradGuard no_grad;
  auto params = m->named_parameters();
  const auto* embedding = params.find("embedding.weight");
  const auto* bias = params.find("decoder.layers.1.norm3.bias");
  TORCH_CHECK(embedding && bias, "the tiny model's parameter names changed");
  const auto direction = (*embedding)[kFavoured];  // [d_model]
  bias->add_(direction * (30.0 / direction.norm().item<double>()));
  return m;
}

std::int64_t count_of(const std::vector<std::int64_t>& tokens, std::int64_t token) {
  return std::count(tokens.begin(), tokens.end(), token);
}

bool has_repeated_bigram(const std::vector<std::int64_t>& tokens) {
  std::set<std::pair<std::int64_t, std::int64_t>> seen;
  for (std::size_t i = 1; i < tokens.size(); ++i) {
    if (!seen.insert({tokens[i - 1], tokens[i]}).second) return true;
  }
  return false;
}

std::vector<DecodeOptions> every_strategy() {
  std::vector<DecodeOptions> all(4);
  all[0].strategy = Strategy::kBeam;
  all[0].nbest = 4;
  all[1].strategy = Strategy::kGreedy;
  all[2] = sampling_options(3, 4);
  all[3].strategy = Strategy::kDiverseBeam;
  all[3].nbest = 4;
  for (auto& o : all) o.beam.max_length_offset = 20;
  return all;
}

TEST(Repetition, TheModelRepeatsWithoutTheOptions) {
  auto m = repeating_model();
  for (const auto& o : every_strategy()) {
    for (const auto& tokens : all_tokens(decode(m, sources(), o))) {
      EXPECT_TRUE(has_repeated_bigram(tokens)) << kStrategies.name(o.strategy);
      EXPECT_GT(count_of(tokens, kFavoured), 10) << kStrategies.name(o.strategy);
    }
  }
}

TEST(Repetition, NoRepeatNgramTwoLeavesNoBigramTwice) {
  auto m = repeating_model();
  for (auto o : every_strategy()) {
    o.repetition.no_repeat_ngram_size = 2;
    const auto results = decode(m, sources(), o);
    for (const auto& tokens : all_tokens(results)) {
      EXPECT_FALSE(has_repeated_bigram(tokens)) << kStrategies.name(o.strategy);
      EXPECT_GT(count_of(tokens, kFavoured), 0);  // still the model's favourite
    }
  }
}

TEST(Repetition, APenaltyCutsTheRepeats) {
  auto m = repeating_model();
  for (auto o : every_strategy()) {
    const auto plain = decode(m, sources(), o);
    o.repetition.penalty = 100.0;  // the favoured logit of ~30 falls to ~0.3 once said
    const auto penalised = decode(m, sources(), o);
    for (std::size_t b = 0; b < plain.size(); ++b) {
      const auto& best = penalised[b].front().tokens;
      EXPECT_LT(2 * count_of(best, kFavoured), count_of(plain[b].front().tokens, kFavoured))
          << kStrategies.name(o.strategy);
      // The token said first is not said again at once (the rest outbid ~0.3), except by chance
      // when sampling.
      if (o.strategy != Strategy::kSample) {
        ASSERT_GE(best.size(), 2u);
        EXPECT_NE(best[1], best[0]) << kStrategies.name(o.strategy);
      }
    }
  }
}

// decode() with the options off is the paper's beam search, and greedy_decode's tokens are
// greedy_search's.
TEST(Repetition, OffChangesNothing) {
  auto m = random_model(42);
  DecodeOptions o;
  o.nbest = 3;
  BeamOptions beam;
  beam.nbest = 3;
  const auto via_decode = decode(m, sources(), o);
  const auto direct = beam_search(m, sources(), beam);
  for (std::size_t b = 0; b < direct.size(); ++b) {
    ASSERT_EQ(via_decode[b].size(), direct[b].size());
    for (std::size_t i = 0; i < direct[b].size(); ++i) {
      EXPECT_EQ(via_decode[b][i].tokens, direct[b][i].tokens);
      EXPECT_EQ(via_decode[b][i].score, direct[b][i].score);
    }
  }
  o.strategy = Strategy::kGreedy;
  o.nbest = 1;
  o.beam.max_length_offset = 50;
  const auto greedy = decode(m, sources(), o);
  const auto tokens = greedy_decode(m, sources(), 100);  // caps above every sentence's
  for (std::size_t b = 0; b < greedy.size(); ++b) {
    const auto& g = greedy[b][0].tokens;
    ASSERT_LE(g.size(), tokens[b].size());
    EXPECT_TRUE(std::equal(g.begin(), g.end(), tokens[b].begin()));  // until the shorter cap
  }
}

}  // namespace
}  // namespace nmt::decode
