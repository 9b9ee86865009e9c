// The analysis of eval/analysis/error_analysis.h: every system's sentences scored in parallel (each
// sentence independent), then summed per corpus and per source-length bucket, ranked and flagged.

#include "eval/analysis/error_analysis.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "eval/analysis/analysis_scores.h"
#include "eval/metrics/python_str.h"

namespace nmt::eval::analysis {
namespace {

// What every system's sentence i is compared with: its source and reference, tokenized once.
struct SegmentContext {
  std::vector<std::string> source_tokens, reference_tokens;
  double reference_source_fraction = 0.0;
};

struct ScoredSentence {
  SentenceResult result;
  BleuStats bleu;
  ChrfStats chrf;
};

// Runs fn(i) for i in [0, n) on `threads` threads, in blocks; rethrows the first exception.
template <class Fn>
void parallel_for(std::size_t n, int threads, const Fn& fn) {
  constexpr std::size_t kBlock = 256;
  std::atomic<std::size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&] {
    try {
      for (std::size_t begin; (begin = next.fetch_add(kBlock)) < n;) {
        for (std::size_t i = begin; i < std::min(n, begin + kBlock); ++i) fn(i);
      }
    } catch (...) {
      const std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
      next = n;
    }
  };
  const auto count = std::min<std::size_t>(static_cast<std::size_t>(threads), n / kBlock + 1);
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < count; ++t) pool.emplace_back(work);
  work();
  for (auto& thread : pool) thread.join();
  if (error) std::rethrow_exception(error);
}

int thread_count(const AnalysisOptions& options) {
  if (options.threads > 0) return options.threads;
  return static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 16u));
}

std::vector<Bucket> make_buckets(const std::vector<int>& edges) {
  std::vector<Bucket> buckets;
  int min_words = 0;
  for (const int edge : edges) {
    buckets.push_back({min_words, edge, 0});
    min_words = edge + 1;
  }
  buckets.push_back({min_words, -1, 0});
  return buckets;
}

std::size_t bucket_of(int words, const std::vector<Bucket>& buckets) {
  for (std::size_t b = 0; b + 1 < buckets.size(); ++b) {
    if (words <= buckets[b].max_words) return b;
  }
  return buckets.size() - 1;
}

// Sums statistics of sentences, then scores them once.
class Accumulator {
 public:
  explicit Accumulator(const AnalysisOptions& options) : options_(&options) {}
  void add(const ScoredSentence& s) {
    bleu_ += s.bleu;
    if (chrf_.empty()) chrf_.assign(s.chrf.size(), 0);
    for (std::size_t k = 0; k < s.chrf.size(); ++k) chrf_[k] += s.chrf[k];
    ++sentences_;
  }
  Totals totals() const {
    Totals t;
    t.sentences = sentences_;
    t.hyp_tokens = static_cast<std::size_t>(bleu_.hyp_len);
    t.ref_tokens = static_cast<std::size_t>(bleu_.ref_len);
    if (sentences_ == 0) return t;
    t.bleu = bleu_from_stats(bleu_, options_->bleu).score;
    t.chrf = chrf_from_stats(chrf_, options_->chrf);
    t.length_ratio = bleu_.ref_len > 0
                         ? static_cast<double>(bleu_.hyp_len) / static_cast<double>(bleu_.ref_len)
                         : 0.0;
    return t;
  }

 private:
  const AnalysisOptions* options_;
  BleuStats bleu_;
  ChrfStats chrf_;
  std::size_t sentences_ = 0;
};

ScoredSentence score(const std::string& hypothesis, const std::string& reference,
                     const SegmentContext& context, const AnalysisOptions& options) {
  const auto scores = score_sentence(hypothesis, reference, options.bleu, options.chrf);
  ScoredSentence out{{}, scores.bleu_stats, scores.chrf_stats};
  auto& r = out.result;
  r.bleu = scores.bleu;
  r.chrf = scores.chrf;
  r.hyp_tokens = static_cast<std::size_t>(scores.bleu_stats.hyp_len);
  r.ref_tokens = static_cast<std::size_t>(scores.bleu_stats.ref_len);
  const auto tokens = tokens_13a(hypothesis);
  r.repetition = find_repetition(tokens, context.reference_tokens, options.detectors);
  r.omission = is_omission(tokens.size(), context.reference_tokens.size(),
                           context.source_tokens.size(), options.detectors);
  r.source_fraction = source_word_fraction(tokens, context.source_tokens);
  r.copy = is_copy(r.source_fraction, count_words(tokens), context.reference_source_fraction,
                   options.detectors);
  return out;
}

std::vector<std::size_t> worst_sentences(const std::vector<SentenceResult>& sentences,
                                         std::size_t count) {
  std::vector<std::size_t> order(sentences.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  count = std::min(count, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(count), order.end(),
                    [&](std::size_t x, std::size_t y) {
                      const auto& a = sentences[x];
                      const auto& b = sentences[y];
                      if (a.chrf != b.chrf) return a.chrf < b.chrf;
                      if (a.bleu != b.bleu) return a.bleu < b.bleu;
                      return x < y;
                    });
  order.resize(count);
  return order;
}

SystemResult analyze_system(const SystemInput& system, const AnalysisInput& input,
                            const std::vector<SegmentContext>& contexts,
                            const std::vector<std::size_t>& bucket_index, std::size_t buckets,
                            const AnalysisOptions& options) {
  std::vector<ScoredSentence> scored(input.sources.size());
  parallel_for(scored.size(), thread_count(options), [&](std::size_t i) {
    scored[i] = score(system.hypotheses[i], input.references[i], contexts[i], options);
  });
  SystemResult out;
  out.name = system.name;
  out.file = system.file;
  Accumulator corpus(options);
  std::vector<Accumulator> by_bucket(buckets, Accumulator(options));
  for (std::size_t i = 0; i < scored.size(); ++i) {
    corpus.add(scored[i]);
    by_bucket[bucket_index[i]].add(scored[i]);
    const auto& r = scored[i].result;
    if (r.repetition) out.repetitions.push_back(i);
    if (r.omission) out.omissions.push_back(i);
    if (r.copy) out.copies.push_back(i);
    out.sentences.push_back(std::move(scored[i].result));
  }
  out.corpus = corpus.totals();
  for (const auto& bucket : by_bucket) out.buckets.push_back(bucket.totals());
  out.worst = worst_sentences(out.sentences, options.worst);
  return out;
}

PairDifference differ(const Analysis& analysis, std::size_t a, std::size_t b, std::size_t count) {
  const auto& x = analysis.systems[a].sentences;
  const auto& y = analysis.systems[b].sentences;
  PairDifference out{a, b, {}};
  std::vector<std::size_t> order(x.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  count = std::min(count, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(count), order.end(),
                    [&](std::size_t i, std::size_t j) {
                      const double di = std::abs(x[i].chrf - y[i].chrf);
                      const double dj = std::abs(x[j].chrf - y[j].chrf);
                      return di != dj ? di > dj : i < j;
                    });
  out.sentences.assign(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(count));
  return out;
}

void check_input(const AnalysisInput& input) {
  const auto n = input.sources.size();
  if (n == 0) throw std::invalid_argument("nothing to analyze: the source has no lines");
  if (input.references.size() != n) {
    throw std::invalid_argument(fmt::format("line counts differ: {} source lines, {} references", n,
                                            input.references.size()));
  }
  if (input.systems.empty()) throw std::invalid_argument("nothing to analyze: no hypotheses");
  for (const auto& system : input.systems) {
    if (system.hypotheses.size() != n) {
      throw std::invalid_argument(
          fmt::format("line counts differ: {} source lines, {} hypotheses of {}", n,
                      system.hypotheses.size(), system.name));
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (input.references[i].empty()) {
      throw std::invalid_argument(fmt::format("reference line {} is empty", i + 1));
    }
  }
}

}  // namespace

std::string Bucket::label() const {
  if (max_words < 0) return fmt::format("{}+", min_words);
  return fmt::format("{}-{}", min_words, max_words);
}

void AnalysisOptions::validate() const {
  for (std::size_t k = 0; k < bucket_edges.size(); ++k) {
    if (bucket_edges[k] < 0 || (k > 0 && bucket_edges[k] <= bucket_edges[k - 1])) {
      throw std::invalid_argument("bucket_edges must be ascending word counts, 0 or more");
    }
  }
  if (threads < 0) throw std::invalid_argument("threads must be 0 (one per core) or more");
  bleu.validate();
  if (bleu.smooth != "exp") throw std::invalid_argument("bleu.smooth must be 'exp' here");
  chrf.validate();
  detectors.validate();
}

Analysis analyze(const AnalysisInput& input, const AnalysisOptions& options) {
  options.validate();
  check_input(input);
  Analysis out;
  out.sentences = input.sources.size();
  out.buckets = make_buckets(options.bucket_edges);
  std::vector<SegmentContext> contexts(out.sentences);
  out.source_words.resize(out.sentences);
  parallel_for(out.sentences, thread_count(options), [&](std::size_t i) {
    auto& c = contexts[i];
    c.source_tokens = tokens_13a(input.sources[i]);
    c.reference_tokens = tokens_13a(input.references[i]);
    c.reference_source_fraction = source_word_fraction(c.reference_tokens, c.source_tokens);
    out.source_words[i] = static_cast<int>(split_python_whitespace(input.sources[i]).size());
  });
  std::vector<std::size_t> bucket_index(out.sentences);
  for (std::size_t i = 0; i < out.sentences; ++i) {
    bucket_index[i] = bucket_of(out.source_words[i], out.buckets);
    ++out.buckets[bucket_index[i]].sentences;
  }
  for (const auto& system : input.systems) {
    out.systems.push_back(
        analyze_system(system, input, contexts, bucket_index, out.buckets.size(), options));
  }
  for (std::size_t a = 0; a < out.systems.size(); ++a) {
    for (std::size_t b = a + 1; b < out.systems.size(); ++b) {
      out.differences.push_back(differ(out, a, b, options.differences));
    }
  }
  out.bleu_signature = bleu_signature(options.bleu, "1");
  out.sentence_bleu_signature = out.bleu_signature;
  const auto eff = out.sentence_bleu_signature.find("eff:no");
  if (eff != std::string::npos) out.sentence_bleu_signature.replace(eff, 6, "eff:yes");
  out.chrf_name = chrf_name(options.chrf);
  out.chrf_signature = chrf_signature(options.chrf, "1");
  return out;
}

}  // namespace nmt::eval::analysis
