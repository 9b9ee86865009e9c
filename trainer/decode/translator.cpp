#include "trainer/decode/translator.h"

#include <ATen/Parallel.h>
#include <ATen/ops/tensor.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <torch/utils.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <string_view>
#include <thread>

#include "common/mix64.h"
#include "common/progress.h"
#include "common/utf8.h"
#include "preprocess/cleaning.h"
#include "trainer/data/padded_batch.h"
#include "trainer/decode/decode.h"
#include "trainer/decode/sampling.h"
#include "trainer/runtime/blas_backend.h"
#include "trainer/runtime/precision.h"

namespace nmt::decode {
namespace {

// The seed of one source's sampling generator: the run's seed and the source's key mixed by
// SplitMix64's finaliser, so that nearby keys get unrelated streams.
std::uint64_t sample_seed(std::uint64_t seed, std::uint64_t key) {
  return splitmix64_finalize(seed + kSplitMix64Gamma * (key + 1));
}

// Whether `text` holds a control character that normalisation removes: C0 but tab, or DEL (C1
// controls are left out: in valid UTF-8 they are rare, not a sign of binary input).
bool has_control_chars(std::string_view text) {
  return std::any_of(text.begin(), text.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return (byte < 0x20 && byte != '\t') || byte == 0x7F;
  });
}

// Counts `line` in `tally` and, for the first lines, warns naming it.
void note(LineTally& tally, std::int64_t line, const std::string& what) {
  tally.add(line);
  if (!tally.named_last()) return;
  spdlog::warn("input line {}: {}{}", line > 0 ? std::to_string(line) : std::string("?"), what,
               tally.count() == static_cast<std::int64_t>(LineTally::kNamed)
                   ? " (further such lines are counted, not named)"
                   : "");
}

bool starts_word(const std::string& piece) {
  return piece.rfind("\xE2\x96\x81", 0) == 0;  // U+2581, SentencePiece's word-start mark
}

bool ends_sentence(std::string piece) {
  while (!piece.empty() && std::string("\"')]").find(piece.back()) != std::string::npos) {
    piece.pop_back();
  }
  const auto ends_with = [&](const char* s) {
    const std::string suffix(s);
    return piece.size() >= suffix.size() &&
           piece.compare(piece.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  for (const char* mark : {".", "!", "?", ";", "\xE2\x80\xA6"}) {  // ... and an ellipsis
    if (ends_with(mark)) return true;
  }
  return false;
}

}  // namespace

void LineTally::add(std::int64_t line) {
  ++count_;
  if (line > 0 && first_.size() < kNamed) first_.push_back(line);
}

std::string LineTally::describe() const {
  if (first_.empty()) return "lines unknown";
  std::string text = first_.size() > 1 ? "lines " : "line ";
  for (std::size_t i = 0; i < first_.size(); ++i) {
    text += (i > 0 ? ", " : "") + std::to_string(first_[i]);
  }
  const auto more = count_ - static_cast<std::int64_t>(first_.size());
  if (more > 0) text += fmt::format(" and {} more", more);
  return text;
}

std::vector<Cut> cut_points(const std::vector<std::int64_t>& ids,
                            const preprocess::Vocabulary& vocab) {
  std::vector<Cut> cuts(ids.size(), Cut::kInside);
  std::string previous;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    std::string piece = vocab.piece(static_cast<std::int32_t>(ids[i]));
    if (starts_word(piece))
      cuts[i] = i > 0 && ends_sentence(previous) ? Cut::kSentence : Cut::kWord;
    previous = std::move(piece);
  }
  return cuts;
}

std::vector<std::vector<std::int64_t>> split_source(const std::vector<std::int64_t>& ids,
                                                    const std::vector<Cut>& cuts,
                                                    std::size_t limit) {
  if (limit == 0) throw std::invalid_argument("split_source: the limit must be at least 1");
  if (cuts.size() != ids.size()) {
    throw std::invalid_argument(
        fmt::format("split_source: {} cut points for {} ids", cuts.size(), ids.size()));
  }
  std::vector<std::vector<std::int64_t>> pieces;
  std::size_t start = 0;
  while (ids.size() - start > limit) {
    // A cut at i keeps ids [start, i) in this piece: i ranges over start + 1 .. start + limit.
    std::size_t word = 0, sentence = 0;
    for (std::size_t i = start + 1; i <= start + limit; ++i) {
      if (cuts[i] == Cut::kSentence) sentence = i;
      if (cuts[i] != Cut::kInside) word = i;
    }
    const std::size_t cut = sentence > 0 ? sentence : word > 0 ? word : start + limit;
    pieces.emplace_back(ids.begin() + static_cast<std::ptrdiff_t>(start),
                        ids.begin() + static_cast<std::ptrdiff_t>(cut));
    start = cut;
  }
  pieces.emplace_back(ids.begin() + static_cast<std::ptrdiff_t>(start), ids.end());
  return pieces;
}

Translator::Translator(model::Transformer model, const preprocess::Vocabulary& vocab,
                       c10::Device device, TranslateOptions options)
    : model_(std::move(model)), vocab_(vocab), device_(device), options_(options) {
  options_.decode.validate();
  model_->to(device_);
  model_->eval();
  if (options_.precision == runtime::Precision::kInt8) {
    if (!device_.is_cpu()) {
      throw std::invalid_argument(
          "precision int8 is for decoding on a CPU; this translator runs on " + device_.str() +
          " (use bf16, fp16 or fp32 there)");
    }
    const double fp32_mb = static_cast<double>(model_->weight_bytes()) / 1e6;
    model_->quantize_int8();
    spdlog::info("precision int8: model weights {:.1f} MB ({:.1f} MB in fp32)",
                 static_cast<double>(model_->weight_bytes()) / 1e6, fp32_mb);
  } else if (options_.precision == runtime::Precision::kFp32 && device_.is_cpu() &&
             options_.packed_weights && model_->pack_fp32()) {
    spdlog::debug("fp32 products on weights packed once (the BLAS's packed GEMM)");
  }
}

std::vector<std::int64_t> Translator::encode_line(const std::string& line,
                                                  std::int64_t line_number) const {
  std::string text = line;
  if (const std::size_t invalid = utf8_invalid_bytes(text); invalid > 0) {
    preprocess::repair_utf8(text);
    note(invalid_utf8_, line_number,
         fmt::format("invalid UTF-8: {} byte(s) replaced by U+FFFD", invalid));
  }
  if (has_control_chars(text)) {
    note(control_chars_, line_number, "control characters (such as NUL) removed");
  }
  preprocess::remove_control_chars(text);
  preprocess::normalize_whitespace(text);
  const auto ids = vocab_.encode(text);
  std::vector<std::int64_t> out(ids.begin(), ids.end());
  if (options_.long_inputs == LongInputs::kTruncate) truncate(out, line_number);
  return out;
}

std::size_t Translator::source_limit() const {
  return static_cast<std::size_t>(model_->config().max_positions - 1);  // room for EOS
}

void Translator::truncate(std::vector<std::int64_t>& ids, std::int64_t line_number) const {
  const auto limit = source_limit();
  if (ids.size() <= limit) return;
  spdlog::warn(
      "input line {}: {} word pieces, more than the model's {} source positions hold: "
      "only the first {} are translated",
      line_number > 0 ? std::to_string(line_number) : std::string("?"), ids.size(),
      model_->config().max_positions, limit);
  ids.resize(limit);
  ++truncated_;
}

std::int64_t auto_batch_tokens(const TranslateOptions& options) {
  if (options.batch_tokens > 0) return options.batch_tokens;
  const auto& d = options.decode;
  const std::int64_t rows = d.strategy == Strategy::kGreedy   ? 1
                            : d.strategy == Strategy::kSample ? d.sampling.num_samples
                                                              : d.beam.beam_size;
  return std::max<std::int64_t>(1, kBatchRowTokens / std::max<std::int64_t>(1, rows));
}

std::vector<std::vector<Hypothesis>> Translator::translate_batch(
    const std::vector<std::vector<std::int64_t>>& sources, const std::vector<std::uint64_t>& keys) {
  const auto src = data::padded_rows(sources, /*eos=*/true).to(device_);  // [batch, src_len]
  runtime::AutocastScope autocast(options_.precision, device_);
  if (options_.decode.strategy != Strategy::kSample) return decode(model_, src, options_.decode);
  // One generator per source, so that its samples are the same whatever batch it is in.
  std::vector<std::vector<Hypothesis>> out;
  for (std::int64_t i = 0; i < src.size(0); ++i) {
    auto generator = seeded_generator(
        device_, sample_seed(options_.decode.sampling.seed, keys[static_cast<std::size_t>(i)]));
    auto one = decode(model_, src.narrow(0, i, 1), options_.decode, &generator);  // [1, src_len]
    out.push_back(std::move(one.front()));
  }
  return out;
}

std::vector<std::vector<Hypothesis>> Translator::translate_ids(
    const std::vector<std::vector<std::int64_t>>& sources, const std::vector<std::uint64_t>& keys) {
  TORCH_CHECK(keys.empty() || keys.size() == sources.size(), "one key per source");
  std::vector<std::size_t> order(sources.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return sources[a].size() < sources[b].size();
  });
  std::vector<std::vector<Hypothesis>> results(sources.size());
  std::vector<std::int64_t> lengths;
  for (const auto i : order) lengths.push_back(static_cast<std::int64_t>(sources[i].size()));
  const auto ends = data::batch_ends(lengths, auto_batch_tokens(options_));
  ProgressMeter progress("translate", "sentences", 10.0);
  std::mutex progress_mutex;
  std::int64_t done = 0;
  // Decodes batch b (sources order[ends[b - 1] .. ends[b])) into results.
  const auto decode_batch = [&](std::size_t b) {
    const std::size_t start = b == 0 ? 0 : ends[b - 1], end = ends[b];
    std::vector<std::vector<std::int64_t>> batch;
    std::vector<std::uint64_t> batch_keys;
    for (std::size_t i = start; i < end; ++i) {
      batch.push_back(sources[order[i]]);
      batch_keys.push_back(keys.empty() ? order[i] : keys[order[i]]);
    }
    auto decoded = translate_batch(batch, batch_keys);
    for (std::size_t i = start; i < end; ++i) results[order[i]] = std::move(decoded[i - start]);
    const std::lock_guard<std::mutex> lock(progress_mutex);
    done += static_cast<std::int64_t>(end - start);
    progress.update(done, static_cast<double>(done) / static_cast<double>(order.size()));
  };
  const std::size_t workers =
      device_.is_cpu() ? std::min<std::size_t>(std::max(options_.workers, 1), ends.size()) : 1;
  if (workers <= 1) {
    for (std::size_t b = 0; b < ends.size(); ++b) decode_batch(b);
  } else {
    // Longest batches first, each to the next free worker, so that none is left with a long one
    // at the end.
    std::atomic<std::size_t> next{0};
    std::vector<std::exception_ptr> errors(workers);
    const int aten_threads = at::get_num_threads(), blas_threads = runtime::blas_threads();
    runtime::set_blas_threads(1);  // process-wide where the BLAS has no per-thread setting
    std::vector<std::thread> threads;
    const auto work = [&](std::size_t w) {
      try {
        runtime::single_threaded_kernels_here();
        for (std::size_t k; (k = next.fetch_add(1)) < ends.size();)
          decode_batch(ends.size() - 1 - k);
      } catch (...) {
        errors[w] = std::current_exception();
        next = ends.size();  // the others stop after their batch
      }
    };
    try {
      for (std::size_t w = 0; w < workers; ++w) threads.emplace_back(work, w);
    } catch (...) {  // no more threads to be had: those started decode every batch
      if (threads.empty()) {
        if (blas_threads > 0) runtime::set_blas_threads(blas_threads);
        throw;
      }
    }
    for (auto& thread : threads) thread.join();
    at::set_num_threads(aten_threads);
    if (blas_threads > 0) runtime::set_blas_threads(blas_threads);
    for (const auto& error : errors) {
      if (error) std::rethrow_exception(error);
    }
  }
  progress.finish(static_cast<std::int64_t>(order.size()));
  return results;
}

std::vector<Translation> Translator::translate_sources(
    const std::vector<std::vector<std::int64_t>>& sources, std::int64_t first_line) {
  const auto limit = source_limit();
  std::vector<std::vector<std::int64_t>> pieces;
  std::vector<std::uint64_t> keys;    // sampling's: (line, piece)
  std::vector<std::size_t> first{0};  // the pieces of source i are [first[i], first[i + 1])
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const auto line = static_cast<std::int64_t>(i) + first_line;
    const auto key = [&] {
      return (static_cast<std::uint64_t>(line) << 16) + (pieces.size() - first.back());
    };
    if (sources[i].empty()) {
      // Nothing to translate: an empty line out, not the model's guess at an empty sentence.
    } else if (sources[i].size() <= limit || options_.long_inputs == LongInputs::kTruncate) {
      keys.push_back(key());
      pieces.push_back(sources[i]);
      truncate(pieces.back(), line);
    } else {
      auto parts = split_source(sources[i], cut_points(sources[i], vocab_), limit);
      spdlog::info(
          "input line {}: {} word pieces, more than the model's {} source positions hold: "
          "translated in {} pieces",
          line, sources[i].size(), model_->config().max_positions, parts.size());
      ++split_;
      for (auto& part : parts) {
        keys.push_back(key());
        pieces.push_back(std::move(part));
      }
    }
    first.push_back(pieces.size());
  }
  auto results = translate_ids(pieces, keys);
  const auto text = [&](const Hypothesis& h) {
    return vocab_.decode({h.tokens.begin(), h.tokens.end()});
  };
  std::vector<Translation> out(sources.size());
  for (std::size_t i = 0; i < sources.size(); ++i) {
    Translation& t = out[i];
    t.pieces = static_cast<std::int64_t>(first[i + 1] - first[i]);
    if (t.pieces == 0) {
      t.nbest.emplace_back();
      t.texts.emplace_back();
      continue;
    }
    if (t.pieces == 1) {
      t.nbest = std::move(results[first[i]]);
      for (const auto& h : t.nbest) t.texts.push_back(text(h));
      continue;
    }
    // The best translation of each piece, joined: one line out per line in.
    Hypothesis joined;
    std::string joined_text;
    for (std::size_t k = first[i]; k < first[i + 1]; ++k) {
      if (results[k].empty()) continue;
      const Hypothesis& best = results[k].front();
      joined.tokens.insert(joined.tokens.end(), best.tokens.begin(), best.tokens.end());
      joined.log_prob += best.log_prob;
      joined.score += best.score;
      const std::string piece_text = text(best);
      if (!piece_text.empty()) joined_text += (joined_text.empty() ? "" : " ") + piece_text;
    }
    t.nbest.push_back(std::move(joined));
    t.texts.push_back(std::move(joined_text));
  }
  return out;
}

std::vector<Translation> Translator::translate_lines(const std::vector<std::string>& lines,
                                                     std::int64_t first_line) {
  std::vector<std::vector<std::int64_t>> sources;
  sources.reserve(lines.size());
  for (const auto& line : lines) {
    sources.push_back(encode_line(line, static_cast<std::int64_t>(sources.size()) + first_line));
  }
  return translate_sources(sources, first_line);
}

at::Tensor Translator::alignment(const std::vector<std::int64_t>& source,
                                 const std::vector<std::int64_t>& output) {
  torch::NoGradGuard no_grad;
  const auto src =
      data::padded_rows(std::vector<std::vector<std::int64_t>>{source}, /*eos=*/true).to(device_);
  std::vector<std::int64_t> tgt_in{preprocess::kBosId};
  tgt_in.insert(tgt_in.end(), output.begin(), output.end());
  const auto tgt =
      at::tensor(tgt_in, at::TensorOptions().dtype(at::kLong)).unsqueeze(0).to(device_);
  return model_->cross_attention_weights(src, tgt)[0].to(at::kCPU);  // [tgt_len, src_len]
}

}  // namespace nmt::decode
