// Decoding and averaging (paper section 6.1): cached incremental decoding gives the tokens of full
// recomputation (where two candidates tie to within float rounding, either), beam 1 is greedy, the
// GNMT length penalty, batched translation keeps the input order, averaging is the element-wise
// mean (and the identity on identical inputs), alignment heatmaps are drawn, and over-long
// sources split into pieces that fit, cut at the best boundary within reach.

#include <ATen/Parallel.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/tensor.h>
#include <fmt/format.h>
#include <torch/cuda.h>
#include <torch/utils.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "preprocess/vocabulary.h"
#include "test_utils.h"
#include "tests/tiny_decoding.h"
#include "trainer/checkpoint/averaging.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/decode/attention_svg.h"
#include "trainer/decode/beam_search.h"
#include "trainer/decode/greedy.h"
#include "trainer/decode/recomputed_steps.h"
#include "trainer/decode/translator.h"
#include "trainer/model/transformer.h"

namespace nmt::decode {
namespace {

namespace fs = std::filesystem;

// Beam search's defaults, returning the `nbest` best hypotheses of at most source length +
// `max_length_offset` tokens.
BeamOptions n_best(std::int64_t nbest, std::int64_t max_length_offset) {
  BeamOptions o;
  o.nbest = nbest;
  o.max_length_offset = max_length_offset;
  return o;
}

// Each source's n-best lists hold the same hypotheses: the same tokens, scores within `tolerance`.
void expect_same_hypotheses(const std::vector<std::vector<Hypothesis>>& actual,
                            const std::vector<std::vector<Hypothesis>>& expected,
                            double tolerance) {
  for (std::size_t b = 0; b < actual.size(); ++b) {
    ASSERT_EQ(actual[b].size(), expected[b].size());
    for (std::size_t i = 0; i < actual[b].size(); ++i) {
      EXPECT_EQ(actual[b][i].tokens, expected[b][i].tokens) << b << "/" << i;
      EXPECT_NEAR(actual[b][i].score, expected[b][i].score, tolerance);
    }
  }
}

// Greedy decoding by recomputing the whole decoder at every step (no cache).
std::vector<std::int64_t> uncached_greedy(model::Transformer& m, const at::Tensor& src,
                                          std::int64_t max_len) {
  torch::NoGradGuard no_grad;
  std::vector<std::int64_t> prefix{preprocess::kBosId};
  std::vector<std::int64_t> out;
  for (std::int64_t step = 0; step < max_len; ++step) {
    const auto tgt = at::tensor(prefix).unsqueeze(0);
    const auto next = m->forward(src, tgt)[0][-1].argmax().item<std::int64_t>();
    if (next == preprocess::kEosId) break;
    out.push_back(next);
    prefix.push_back(next);
  }
  return out;
}

// The next-token logits after `prefix` (BOS not included) for one unpadded source row [1, len],
// by running the whole decoder: [vocab].
at::Tensor next_logits(model::Transformer& m, const at::Tensor& row,
                       const std::vector<std::int64_t>& prefix) {
  torch::NoGradGuard no_grad;
  std::vector<std::int64_t> tgt{preprocess::kBosId};
  tgt.insert(tgt.end(), prefix.begin(), prefix.end());
  return m->forward(row, at::tensor(tgt).unsqueeze(0))[0][-1].to(at::kDouble);
}

// Two tokens whose logits are this close are a tie as far as float32 rounding goes: a batched or
// cached computation differs from a single-row one by about 1e-6 on these logits, and beam search
// adds each log-probability to a running score of magnitude up to ~100 (ulp 8e-6) before it
// compares. A real decoding bug parts outputs at a gap of order 0.1 and more.
constexpr double kTieTolerance = 1e-4;

// Greedy outputs of two computations that differ only in batch shape, caching or scoring: the
// same tokens, except that where two candidates nearly tie, rounding may pick either and the
// outputs part there (and differ anywhere after). Expects the first difference, if any, to be such
// a near-tie of the two tokens picked there (EOS for an output that ended), under recomputation.
void expect_same_greedy_output(model::Transformer& m, const at::Tensor& row,
                               const std::vector<std::int64_t>& actual,
                               const std::vector<std::int64_t>& expected, const std::string& what) {
  std::size_t t = 0;
  while (t < actual.size() && t < expected.size() && actual[t] == expected[t]) ++t;
  if (t == actual.size() && t == expected.size()) return;
  const auto a = t < actual.size() ? actual[t] : preprocess::kEosId;
  const auto b = t < expected.size() ? expected[t] : preprocess::kEosId;
  const auto logits =
      next_logits(m, row, {expected.begin(), expected.begin() + static_cast<std::ptrdiff_t>(t)});
  const double gap = std::abs(logits[a].item<double>() - logits[b].item<double>());
  EXPECT_LE(gap, kTieTolerance) << what << ": token " << t << " is " << a << ", expected " << b
                                << ", and their logits are no near-tie";
}

TEST(Decode, CachedGreedyEqualsFullRecomputation) {
  for (std::uint64_t seed : {1, 2, 3}) {
    auto m = random_model(seed);
    const auto src = sources();
    const auto cached = greedy_decode(m, src, 20);
    for (std::int64_t b = 0; b < 3; ++b) {
      const auto row = src[b].unsqueeze(0).narrow(1, 0, src[b].ne(0).sum().item<std::int64_t>());
      expect_same_greedy_output(m, row, cached[static_cast<std::size_t>(b)],
                                uncached_greedy(m, row, 20),
                                "seed " + std::to_string(seed) + " row " + std::to_string(b));
    }
  }
}

TEST(Decode, BeamOneEqualsGreedy) {
  for (std::uint64_t seed : {4, 5, 7}) {
    auto m = random_model(seed);
    BeamOptions o;
    o.beam_size = 1;
    o.max_length_offset = 15;
    const auto src = sources();
    const auto beams = beam_search(m, src, o);  // batched, padded
    for (std::int64_t b = 0; b < 3; ++b) {
      const auto length = src[b].ne(0).sum().item<std::int64_t>();
      const auto row = src[b].unsqueeze(0).narrow(1, 0, length);
      const auto greedy = greedy_decode(m, row, length + o.max_length_offset);
      ASSERT_EQ(beams[static_cast<std::size_t>(b)].size(), 1u);
      expect_same_greedy_output(m, row, beams[static_cast<std::size_t>(b)][0].tokens, greedy[0],
                                "seed " + std::to_string(seed) + " row " + std::to_string(b));
    }
  }
}

TEST(Decode, BeamScoresAreSortedAndPenalised) {
  auto m = random_model(6);
  BeamOptions o = n_best(4, 10);
  const auto results = beam_search(m, sources(), o);
  for (const auto& nbest : results) {
    ASSERT_FALSE(nbest.empty());
    for (std::size_t i = 1; i < nbest.size(); ++i) EXPECT_GE(nbest[i - 1].score, nbest[i].score);
    for (const auto& h : nbest) {
      EXPECT_NEAR(h.score,
                  h.log_prob / length_penalty(static_cast<std::int64_t>(h.tokens.size()) + 1, 0.6),
                  1e-9);
      EXPECT_LE(h.log_prob, 0.0);
    }
  }
  const auto again = beam_search(m, sources(), o);  // deterministic
  for (std::size_t b = 0; b < results.size(); ++b) {
    ASSERT_EQ(again[b].size(), results[b].size());
    for (std::size_t i = 0; i < results[b].size(); ++i) {
      EXPECT_EQ(again[b][i].tokens, results[b][i].tokens);
      EXPECT_EQ(again[b][i].score, results[b][i].score);
    }
  }
}

TEST(Decode, CachedBeamSearchEqualsRecomputation) {
  // In double precision the cached and recomputed logits agree to ~1e-15, so no near-tie among the
  // 2K candidates of a step can rank differently in the two searches, and the n-best lists must
  // be the same (in float32, a pruning near-tie would part them for good). The cache's logic does
  // not depend on the type.
  auto m = random_model(8);
  m->to(at::kDouble);
  const BeamOptions o = n_best(3, 12);
  const auto cached = beam_search(m, sources(), o);
  const auto recomputed = beam_search(m, sources(), o, {}, recomputed_steps);
  expect_same_hypotheses(cached, recomputed, 1e-4);
}

// Sentences of one batch end at different steps and leave the batch as they end; the others'
// n-best lists are each one's own, searched alone (double precision: no near-tie can part them).
// The EOS embedding (the output projection's EOS row too) is scaled up so that hypotheses end by
// EOS at many different steps, besides the length caps. Also with groups (diverse beam search),
// whose finished groups stay while their sentence goes on.
TEST(Decode, SentencesLeaveTheBatchWithoutChangingTheOthers) {
  auto m = random_model(10);
  m->to(at::kDouble);
  {
    torch::NoGradGuard no_grad;
    m->named_parameters()["embedding.weight"][preprocess::kEosId].mul_(2.5);
  }
  const BeamOptions o = n_best(4, 9);
  const auto src = at::tensor(std::vector<std::int64_t>{5,  6,  7,  8,  9,  3,  0,  0,  //
                                                        10, 11, 3,  0,  0,  0,  0,  0,  //
                                                        12, 13, 14, 15, 16, 17, 18, 3,  //
                                                        19, 3,  0,  0,  0,  0,  0,  0,  //
                                                        20, 21, 22, 23, 3,  0,  0,  0,  //
                                                        24, 25, 26, 27, 28, 29, 3,  0})
                       .reshape({6, 8});
  const auto batched = beam_search(m, src, o);
  const auto grouped = grouped_beam_search(m, src, o, 2, 0.5, {});
  std::set<std::size_t> lengths;  // of the hypotheses found
  for (std::int64_t b = 0; b < src.size(0); ++b) {
    const auto length = src[b].ne(0).sum().item<std::int64_t>();
    const auto row = src[b].unsqueeze(0).narrow(1, 0, length);  // [1, length]
    const auto i = static_cast<std::size_t>(b);
    ASSERT_EQ(batched[i].size(), 4u);
    for (const auto& h : batched[i]) lengths.insert(h.tokens.size());
    expect_same_hypotheses({batched[i]}, beam_search(m, row, o), 1e-9);
    const auto alone = grouped_beam_search(m, row, o, 2, 0.5, {}).front();
    ASSERT_EQ(grouped[i].size(), alone.size());
    for (std::size_t g = 0; g < alone.size(); ++g)
      expect_same_hypotheses({grouped[i][g]}, {alone[g]}, 1e-9);
  }
  EXPECT_GE(lengths.size(), 5u) << "the hypotheses should end at many different steps";
}

// Batched beam search with the KV cache on the GPU gives the CPU's hypotheses for a fixed model
// (in double precision, so that no near-tie can split them).
TEST(Decode, BeamSearchOnTheGpuEqualsTheCpu) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  auto m = random_model(9);
  m->to(at::kDouble);
  BeamOptions o = n_best(2, 10);
  const auto on_cpu = beam_search(m, sources(), o);
  m->to(c10::Device(c10::kCUDA, 0));
  const auto on_gpu = beam_search(m, sources().to(c10::Device(c10::kCUDA, 0)), o);
  ASSERT_EQ(on_gpu.size(), on_cpu.size());
  expect_same_hypotheses(on_gpu, on_cpu, 1e-5);
}

TEST(Decode, LengthPenaltyFormula) {
  EXPECT_DOUBLE_EQ(length_penalty(1, 0.6), 1.0);  // ((5 + 1) / 6)^alpha
  EXPECT_NEAR(length_penalty(10, 0.6), std::pow(15.0 / 6.0, 0.6), 1e-12);
  EXPECT_NEAR(length_penalty(25, 0.6), std::pow(5.0, 0.6), 1e-12);
  EXPECT_DOUBLE_EQ(length_penalty(40, 0.0), 1.0);
  BeamOptions bad;
  bad.nbest = 5;
  EXPECT_THROW(bad.validate(), std::invalid_argument);
}

std::string save_random(const testing::TempDir& dir, const std::string& name, std::uint64_t seed,
                        std::int64_t step, const RunConfig& config) {
  auto m = random_model(seed);
  checkpoint::TrainingState state;
  state.step = step;
  const std::string path = dir.file(name);
  checkpoint::save_checkpoint(path, *m, nullptr, state, config);
  return path;
}

TEST(Averaging, IsTheElementwiseMeanAndIdentityOnIdenticalInputs) {
  testing::TempDir dir;
  RunConfig config;
  config.model = tiny();
  std::vector<std::string> inputs;
  for (int k = 0; k < 3; ++k)
    inputs.push_back(save_random(dir, fmt::format("c{}.h5", k), 10 + k, 100 * (k + 1), config));
  checkpoint::average_checkpoints(inputs, dir.file("avg.h5"));
  model::Transformer avg(config.model);
  const auto state = checkpoint::load_checkpoint(dir.file("avg.h5"), *avg, nullptr, config);
  EXPECT_EQ(state.averaged_from, 3);
  EXPECT_EQ(state.step, 300);
  auto a = random_model(10), b = random_model(11), c = random_model(12);
  const auto pa = a->named_parameters(), pb = b->named_parameters(), pc = c->named_parameters();
  for (const auto& item : avg->named_parameters()) {
    const auto& key = item.key();
    const auto x = pa[key].to(at::kDouble), y = pb[key].to(at::kDouble),
               z = pc[key].to(at::kDouble);
    // A float32 running mean rounds by a few ulps of its inputs (not of the mean, which can be
    // near zero): 1e-6 of the largest input is about 16 of them. A wrong weight is off by 1e-2.
    const double scale = std::max({1.0, x.abs().max().item<double>(), y.abs().max().item<double>(),
                                   z.abs().max().item<double>()});
    const double diff =
        (item.value().to(at::kDouble) - (x + y + z) / 3.0).abs().max().item<double>();
    EXPECT_LE(diff, 1e-6 * scale) << key;
  }
  const auto same = save_random(dir, "same.h5", 42, 1, config);
  checkpoint::average_checkpoints({same, same, same, same, same}, dir.file("identity.h5"));
  model::Transformer x(config.model), y(config.model);
  checkpoint::load_checkpoint(same, *x, nullptr, config);
  checkpoint::load_checkpoint(dir.file("identity.h5"), *y, nullptr, config);
  const auto py = y->named_parameters();
  for (const auto& item : x->named_parameters())
    EXPECT_TRUE(at::equal(item.value(), py[item.key()])) << item.key();
}

TEST(Averaging, RefusesDifferentConfigs) {
  testing::TempDir dir;
  RunConfig config;
  config.model = tiny();
  const auto a = save_random(dir, "a.h5", 1, 1, config);
  RunConfig other = config;
  other.model.d_ff = 128;
  torch::manual_seed(2);
  model::Transformer m(other.model);
  checkpoint::save_checkpoint(dir.file("b.h5"), *m, nullptr, {}, other);
  NMT_EXPECT_THROW_WITH(checkpoint::average_checkpoints({a, dir.file("b.h5")}, dir.file("out.h5")),
                        std::runtime_error, "a.h5", "b.h5", "d_ff");
  EXPECT_FALSE(fs::exists(dir.file("out.h5")));
}

TEST(AttentionSvg, DrawsOneCellPerPairWithEscapedLabels) {
  const auto weights =
      at::tensor(std::vector<float>{0.9f, 0.1f, 0.0f, 0.2f, 0.3f, 0.5f}).reshape({2, 3});
  const auto svg = attention_svg({"▁a", "<b>", "</s>"}, {"▁x", "</s>"}, weights, "line 1");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  std::size_t cells = 0;
  for (auto pos = svg.find("<rect x="); pos != std::string::npos;
       pos = svg.find("<rect x=", pos + 1))
    ++cells;
  EXPECT_EQ(cells, 6u);
  EXPECT_NE(svg.find("&lt;b&gt;"), std::string::npos);
  EXPECT_NE(svg.find("<title>0.900</title>"), std::string::npos);
  EXPECT_THROW(attention_svg({"a"}, {"x"}, weights, "bad"), c10::Error);
}

std::vector<std::int64_t> iota_ids(std::size_t n) {
  std::vector<std::int64_t> ids(n);
  for (std::size_t i = 0; i < n; ++i) ids[i] = static_cast<std::int64_t>(100 + i);
  return ids;
}

std::vector<std::size_t> piece_sizes(const std::vector<std::vector<std::int64_t>>& pieces) {
  std::vector<std::size_t> sizes;
  for (const auto& p : pieces) sizes.push_back(p.size());
  return sizes;
}

TEST(SplitSource, FittingSourcesAreOnePiece) {
  const auto ids = iota_ids(5);
  EXPECT_EQ(split_source(ids, std::vector<Cut>(5, Cut::kInside), 5),
            (std::vector<std::vector<std::int64_t>>{ids}));
  EXPECT_EQ(split_source({}, {}, 3), (std::vector<std::vector<std::int64_t>>{{}}));
  EXPECT_THROW(split_source(ids, std::vector<Cut>(5, Cut::kWord), 0), std::invalid_argument);
  EXPECT_THROW(split_source(ids, std::vector<Cut>(4, Cut::kWord), 3), std::invalid_argument);
}

TEST(SplitSource, PrefersSentencesThenWordsThenCutsAtTheLimit) {
  const auto ids = iota_ids(10);
  // No boundary at all: cut exactly at the limit.
  EXPECT_EQ(piece_sizes(split_source(ids, std::vector<Cut>(10, Cut::kInside), 4)),
            (std::vector<std::size_t>{4, 4, 2}));
  // Words start at 0, 3, 5, 8: the last word start within reach.
  std::vector<Cut> cuts(10, Cut::kInside);
  for (std::size_t i : {0, 3, 5, 8}) cuts[i] = Cut::kWord;
  EXPECT_EQ(piece_sizes(split_source(ids, cuts, 4)), (std::vector<std::size_t>{3, 2, 3, 2}));
  // A sentence boundary at 2 wins over the later word boundary at 3, within the same reach.
  cuts[2] = Cut::kSentence;
  EXPECT_EQ(piece_sizes(split_source(ids, cuts, 4)), (std::vector<std::size_t>{2, 3, 3, 2}));
  // With a reach of 5, all that follows the word at 5 fits in one piece.
  EXPECT_EQ(piece_sizes(split_source(ids, cuts, 5)), (std::vector<std::size_t>{2, 3, 5}));
}

TEST(SplitSource, PiecesFitAndConcatenateToTheSource) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t n = rng() % 300, limit = 1 + rng() % 40;
    const auto ids = iota_ids(n);
    std::vector<Cut> cuts(n);
    for (auto& c : cuts) c = static_cast<Cut>(rng() % 3);
    const auto pieces = split_source(ids, cuts, limit);
    std::vector<std::int64_t> joined;
    std::size_t start = 0;
    for (std::size_t k = 0; k < pieces.size(); ++k) {
      ASSERT_LE(pieces[k].size(), limit);
      ASSERT_TRUE(!pieces[k].empty() || n == 0);
      joined.insert(joined.end(), pieces[k].begin(), pieces[k].end());
      const std::size_t piece_start = start;
      start += pieces[k].size();
      if (k + 1 == pieces.size()) break;
      // The cut is the last boundary of the best kind within reach: none better anywhere in
      // reach, none as good after it.
      const Cut used = cuts[start];  // kInside: a hard cut at the limit
      for (std::size_t i = piece_start + 1; i <= piece_start + limit; ++i) {
        ASSERT_LE(static_cast<int>(cuts[i]), static_cast<int>(used)) << "trial " << trial;
        if (i > start) {
          ASSERT_LT(static_cast<int>(cuts[i]), static_cast<int>(used)) << "trial " << trial;
        }
      }
    }
    EXPECT_EQ(joined, ids);
  }
}

// A 40-piece vocabulary trained on one repeated line of words and sentence ends.
preprocess::Vocabulary small_vocabulary() {
  std::vector<std::string> corpus;
  for (int i = 0; i < 300; ++i) corpus.push_back("a dog runs. two cats sit! the man walks");
  preprocess::VocabularyOptions options;
  options.vocab_size = 40;
  return preprocess::Vocabulary::from_serialized(preprocess::train_vocabulary(corpus, options),
                                                 "test");
}

TEST(SplitSource, CutPointsFollowWordsAndSentenceEnds) {
  const auto vocab = small_vocabulary();
  const auto encoded = vocab.encode("a dog runs. two cats sit! the man walks");
  const std::vector<std::int64_t> ids(encoded.begin(), encoded.end());
  const auto cuts = cut_points(ids, vocab);
  std::string marked;  // the text with | before a word and || before a sentence
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i > 0 && cuts[i] == Cut::kSentence) marked += "||";
    if (i > 0 && cuts[i] == Cut::kWord) marked += "|";
    marked += vocab.piece(static_cast<std::int32_t>(ids[i]));
  }
  std::string expected =
      "\u2581a|\u2581dog|\u2581runs.||\u2581two|\u2581cats|\u2581sit!||\u2581the|"
      "\u2581man|\u2581walks";
  // Pieces inside a word may differ with the vocabulary; compare the boundaries only.
  const auto strip = [](std::string text) {
    std::string out;
    for (char c : text) {
      if (c == '|' || c == '.' || c == '!') out += c;
    }
    return out;
  };
  EXPECT_EQ(strip(marked), strip(expected)) << marked;
}

TEST(Translator, WorkersDecodeEachBatchAsOneThreadDoes) {
  const auto vocab = small_vocabulary();
  // Single-threaded kernels here too, as in the workers: both decode with the same summation
  // order, so the comparison holds on any CPU and BLAS.
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  // 23 sources of 1 to 12 ids in a scrambled order, in batches of at most 30 padded tokens: many
  // batches of different lengths for the workers to share.
  std::mt19937 random(7);
  std::vector<std::vector<std::int64_t>> sources;
  for (int i = 0; i < 23; ++i) {
    std::vector<std::int64_t> ids(1 + (i * 7) % 12);
    for (auto& id : ids) id = std::uniform_int_distribution<std::int64_t>(4, 39)(random);
    sources.push_back(ids);
  }
  for (const auto strategy : {Strategy::kBeam, Strategy::kGreedy, Strategy::kSample}) {
    TranslateOptions options;
    options.decode.strategy = strategy;
    options.decode.beam.max_length_offset = 6;
    options.batch_tokens = 30;
    std::vector<std::vector<std::vector<Hypothesis>>> results;
    for (const int workers : {1, 3}) {
      options.workers = workers;
      Translator translator(random_model(41), vocab, c10::Device(c10::kCPU), options);
      results.push_back(translator.translate_ids(sources));
    }
    ASSERT_EQ(results[1].size(), sources.size());
    for (std::size_t i = 0; i < sources.size(); ++i) {
      ASSERT_EQ(results[1][i].size(), results[0][i].size()) << "source " << i;
      for (std::size_t k = 0; k < results[0][i].size(); ++k) {
        EXPECT_EQ(results[1][i][k].tokens, results[0][i][k].tokens)
            << "source " << i << ", hypothesis " << k << ", strategy "
            << static_cast<int>(strategy);
        EXPECT_NEAR(results[1][i][k].score, results[0][i][k].score, 1e-4) << "source " << i;
      }
    }
  }
  at::set_num_threads(threads);
}

}  // namespace
}  // namespace nmt::decode
