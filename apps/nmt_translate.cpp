// nmt-translate: decoding of raw text or of a shard split with a trained or averaged checkpoint,
// by beam search (the paper's) or another strategy (docs/decoding.md); detokenized output, one
// line per input line, in input order. Text is read as it arrives (common/line_reader.h): on an
// interactive stream each line is translated and printed once it is complete, on a file in windows
// of --batch-window lines. A blank line gives an empty line. A source longer than the model's
// source positions is truncated (default) or, with
// --long-inputs split, translated in pieces whose translations share its output line. Input that
// is not clean UTF-8 text is translated too, one output line per input line: each byte that is
// part of no well-formed UTF-8 sequence becomes U+FFFD and control characters (NUL...) are
// removed, with warnings naming the first such lines and a count at the end. The checkpoint
// carries its SentencePiece model, so it translates from any folder.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fcntl.h>
#include <unistd.h>

#include "apps/runtime_flags.h"
#include "apps/tool_main.h"
#include "common/atomic_file.h"
#include "common/cli.h"
#include "common/line_reader.h"
#include "preprocess/shard_format.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/checkpoint/checkpoint_model.h"
#include "trainer/checkpoint/checkpoint_vocabulary.h"
#include "trainer/decode/attention_svg.h"
#include "trainer/decode/translator.h"
#include "trainer/runtime/blas_backend.h"

namespace {

namespace fs = std::filesystem;

struct Options {
  std::string checkpoint, spm_model, input, output, data_dir, split, attention_dir;
  nmt::apps::RuntimeFlags runtime;  // --device, --threads, --precision
  std::string long_inputs = "truncate";
  std::vector<std::int64_t> attention_lines;
  std::size_t batch_window = 1000;  // lines read ahead when more input is waiting
  std::string strategy = "beam";
  bool greedy = false;
  nmt::apps::GivenBeam given;  // else the checkpoint's decode.beam / alpha
  nmt::decode::TranslateOptions translate;
};

// The source side of a shard split of --data, else of the checkpoint's own data folder.
std::vector<std::vector<std::int64_t>> split_sources(const Options& o, const nmt::RunConfig& config,
                                                     const std::string& vocab_sha) {
  const std::string& dir = o.data_dir.empty() ? config.data.dir : o.data_dir;
  nmt::preprocess::DatasetOptions same_vocab;
  same_vocab.expect_vocab_sha256 = vocab_sha;
  const auto data = nmt::preprocess::ShardDataset::open(dir, o.split, same_vocab);
  std::vector<std::vector<std::int64_t>> sources;
  for (const auto& pair : data) sources.emplace_back(pair.src.begin(), pair.src.end());
  return sources;
}

// Heatmaps of the --attention-lines that fall in this window of lines [first_line, first_line +
// sources.size()).
void write_alignments(nmt::decode::Translator& t, const nmt::preprocess::Vocabulary& vocab,
                      const Options& o, std::int64_t first_line,
                      const std::vector<std::vector<std::int64_t>>& sources,
                      const std::vector<nmt::decode::Translation>& results) {
  const auto pieces = [&](const std::vector<std::int64_t>& ids) {
    std::vector<std::string> out;
    for (auto id : ids) out.push_back(vocab.piece(static_cast<std::int32_t>(id)));
    out.push_back("</s>");
    return out;
  };
  for (const auto line : o.attention_lines) {
    if (line < first_line || line >= first_line + static_cast<std::int64_t>(sources.size())) {
      continue;
    }
    const auto i = static_cast<std::size_t>(line - first_line);
    if (results[i].pieces != 1) {
      spdlog::warn("--attention-lines {}: the line was {}; no heatmap", line,
                   results[i].pieces == 0 ? "empty"
                                          : fmt::format("split into {} pieces", results[i].pieces));
      continue;
    }
    auto source = sources[i];
    source.resize(std::min(source.size(), t.source_limit()));  // as it was translated
    const auto& output = results[i].nbest.front().tokens;
    const auto weights = t.alignment(source, output);
    fs::create_directories(o.attention_dir);
    const std::string path =
        (fs::path(o.attention_dir) / fmt::format("line-{}.svg", line)).string();
    nmt::write_file_atomically(
        path, nmt::decode::attention_svg(
                  pieces(source), pieces(output), weights,
                  fmt::format("line {}: cross-attention, last decoder layer", line)));
    spdlog::info("wrote {}", path);
  }
}

// The translations of one window as output lines: the best one per line, or with --nbest > 1
// "i ||| text ||| score" lines (i counting input lines from 0).
std::string output_text(const std::vector<nmt::decode::Translation>& results,
                        std::int64_t first_index, bool nbest) {
  std::string text;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    if (r.nbest.empty() && !nbest) text += "\n";  // one line out per line in, whatever happened
    for (std::size_t k = 0; k < r.nbest.size(); ++k) {
      text +=
          nbest ? fmt::format("{} ||| {} ||| {:.4f}\n", first_index + static_cast<std::int64_t>(i),
                              r.texts[k], r.nbest[k].score)
                : r.texts[k] + "\n";
    }
  }
  return text;
}

// Where translations go: stdout a window at a time, flushed (a reader sees each as soon as it is
// translated), or a file written whole at the end (a temporary name, checked writes, fsync,
// rename: a full disk is an error naming it, and no half-written translation keeps its name).
class Output {
 public:
  explicit Output(std::string path) : path_(std::move(path)) {}
  void write(const std::string& text) {
    if (!path_.empty()) {
      pending_ += text;
      return;
    }
    std::cout << text << std::flush;
    if (!std::cout) throw std::runtime_error("cannot write the translations to stdout");
  }
  void finish() {
    if (!path_.empty()) nmt::write_file_atomically(path_, pending_);
  }

 private:
  std::string path_;
  std::string pending_;
};

// Opens --input (or stdin for none or "-"); the descriptor is closed with the returned guard.
struct InputFile {
  explicit InputFile(const std::string& path) {
    if (path.empty() || path == "-") return;
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error(path + ": cannot open the input");
    name = path;
  }
  ~InputFile() {
    if (fd != STDIN_FILENO) ::close(fd);
  }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  int fd = STDIN_FILENO;
  std::string name = "<stdin>";
};

int run(const Options& o) {
  nmt::runtime::check_blas_backend();
  auto [config, state, model] = nmt::checkpoint::load_for_inference(o.checkpoint);
  const auto [device, precision, threads] = nmt::apps::resolve_runtime(o.runtime, config);
  const auto vocab = nmt::checkpoint::checkpoint_vocabulary(o.checkpoint, state, config,
                                                            {o.spm_model, o.data_dir});
  auto translate_options = o.translate;
  translate_options.precision = precision;
  translate_options.packed_weights = true;  // this process's model decodes only
  translate_options.workers = threads;
  auto& beam = translate_options.decode.beam;
  nmt::apps::beam_and_alpha_of_run(o.given, config.decode, beam.beam_size, beam.length_penalty);
  translate_options.decode.validate();
  if (translate_options.decode.strategy == nmt::decode::Strategy::kBeam)
    spdlog::info("beam {}, alpha {}", beam.beam_size, beam.length_penalty);
  nmt::decode::Translator translator(model, vocab, device, translate_options);
  const bool nbest = o.translate.decode.nbest > 1;
  Output output(o.output);
  std::int64_t lines = 0;  // translated so far
  const auto translate_window = [&](const std::vector<std::vector<std::int64_t>>& sources) {
    const auto results = translator.translate_sources(sources, lines + 1);
    output.write(output_text(results, lines, nbest));
    if (!o.attention_dir.empty())
      write_alignments(translator, vocab, o, lines + 1, sources, results);
    lines += static_cast<std::int64_t>(sources.size());
  };
  if (!o.split.empty()) {
    translate_window(split_sources(o, config, vocab.sha256()));
  } else {
    InputFile input(o.input);
    nmt::LineReader reader(input.fd, input.name);
    for (auto batch = reader.next_batch(o.batch_window); !batch.empty();
         batch = reader.next_batch(o.batch_window)) {
      std::vector<std::vector<std::int64_t>> sources;
      for (const auto& line : batch) {
        sources.push_back(
            translator.encode_line(line, lines + static_cast<std::int64_t>(sources.size()) + 1));
      }
      translate_window(sources);
    }
  }
  output.finish();
  if (translator.truncated() > 0) {
    spdlog::warn("{} input line(s) truncated to the model's {} source positions",
                 translator.truncated(), config.model.max_positions);
  }
  if (translator.split() > 0) {
    spdlog::info("{} input line(s) split into pieces that fit the model's {} source positions",
                 translator.split(), config.model.max_positions);
  }
  if (const auto& bad = translator.invalid_utf8(); bad.count() > 0) {
    spdlog::warn(
        "{} input line(s) held invalid UTF-8 ({}): each byte that is part of no well-formed "
        "UTF-8 sequence was replaced by U+FFFD before tokenizing",
        bad.count(), bad.describe());
  }
  if (const auto& bad = translator.control_chars(); bad.count() > 0) {
    spdlog::warn("{} input line(s) held control characters ({}): removed before tokenizing",
                 bad.count(), bad.describe());
  }
  for (const auto line : o.attention_lines) {
    if (line < 1 || line > lines) {
      throw std::invalid_argument(
          fmt::format("--attention-lines {}: the input has {} lines", line, lines));
    }
  }
  return 0;
}

// The decoding strategy and its options (trainer/decode/decode_options.h, docs/decoding.md).
void add_decoding_flags(CLI::App& app, Options& o) {
  auto& d = o.translate.decode;
  app.add_option("--strategy", o.strategy,
                 "beam (the paper's), greedy, sample or diverse-beam (docs/decoding.md)")
      ->capture_default_str()
      ->check(nmt::parsed_by(
          [](const std::string& v) { return nmt::decode::kStrategies.parse(v, "--strategy"); }));
  app.add_flag("--greedy", o.greedy, "Greedy decoding (--strategy greedy)");
  app.add_option("--beam", d.beam.beam_size,
                 "Beam size (beam, diverse-beam; default: the checkpoint's decode.beam)");
  app.add_option("--alpha", d.beam.length_penalty,
                 "Length penalty alpha: scores are log P / ((5 + |Y|) / 6)^alpha (default: the "
                 "checkpoint's decode.alpha)");
  app.add_option("--max-len-offset", d.beam.max_length_offset, "Output length <= input + this")
      ->capture_default_str();
  app.add_option("--nbest", d.nbest, "Hypotheses per sentence ('i ||| text ||| score')")
      ->capture_default_str();
  app.add_option("--temperature", d.sampling.temperature,
                 "sample: divides the logits (< 1 sharper, > 1 more varied)")
      ->capture_default_str();
  app.add_option("--top-k", d.sampling.top_k, "sample: only the k most probable tokens (0: all)")
      ->capture_default_str();
  app.add_option("--top-p", d.sampling.top_p,
                 "sample: only the smallest set of tokens whose probability reaches p (nucleus)")
      ->capture_default_str();
  app.add_option("--seed", d.sampling.seed,
                 "sample: the seed; the same seed, the same samples of each line (whatever its "
                 "batch)")
      ->capture_default_str();
  app.add_option("--num-samples", d.sampling.num_samples,
                 "sample: samples drawn per sentence, ranked by score (--nbest of them printed)")
      ->capture_default_str();
  app.add_option("--groups", d.diverse.groups,
                 "diverse-beam: groups the beam is split into (must divide --beam)")
      ->capture_default_str();
  app.add_option("--diversity-penalty", d.diverse.diversity_penalty,
                 "diverse-beam: penalty per earlier group's choice of the same token")
      ->capture_default_str();
  app.add_option("--repetition-penalty", d.repetition.penalty,
                 "Discourage tokens already output (1: off; e.g. 1.2), any strategy")
      ->capture_default_str();
  app.add_option("--no-repeat-ngram-size", d.repetition.no_repeat_ngram_size,
                 "Never output an n-gram of this size twice (0: off), any strategy")
      ->capture_default_str();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Translate text or a shard split with a checkpoint (beam search with the paper's settings, "
      "or greedy, sampling, diverse beam search: docs/decoding.md).",
      "nmt-translate"};
  Options o;
  nmt::apps::add_checkpoint_flag(app, o.checkpoint);
  app.add_option("--spm-model", o.spm_model,
                 "SentencePiece model (default: the one the checkpoint carries)");
  app.add_option("--input", o.input,
                 "Input text, one sentence a line (default: stdin); one output line per input "
                 "line, also for invalid UTF-8 (each ill-formed byte becomes U+FFFD) and control "
                 "characters such as NUL (removed), with a warning naming the lines");
  app.add_option("--output", o.output, "Output file (default: stdout)");
  app.add_option("--data", o.data_dir,
                 "Shard directory for --split (default: the checkpoint's data.dir)");
  app.add_option("--split", o.split, "Translate this split's source side instead of text");
  app.add_option("--batch-window", o.batch_window,
                 "Lines read ahead and translated together when more input is waiting (files); "
                 "an interactive stream is translated line by line as it arrives")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  add_decoding_flags(app, o);
  app.add_option("--batch-tokens", o.translate.batch_tokens,
                 "Padded source tokens per batch (0: 4000 / the beam size for beam search, "
                 "4000 / --num-samples for sampling, 4000 for greedy)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  nmt::apps::add_runtime_flags(app, o.runtime);
  app.add_option("--long-inputs", o.long_inputs,
                 "A line longer than the model's source positions: truncate (translate its "
                 "first pieces) or split (translate it in pieces, joined on one output line)")
      ->capture_default_str();
  app.add_option("--attention-svg", o.attention_dir, "Write cross-attention heatmaps (SVG) here");
  app.add_option("--attention-lines", o.attention_lines, "1-based input lines to draw")
      ->delimiter(',');
  return nmt::apps::run_main(app, argc, argv, [&] {
    if (!o.split.empty() && !o.input.empty()) {
      throw nmt::UsageError("--split and --input: translate either a shard split or text");
    }
    try {
      o.translate.long_inputs = nmt::decode::kLongInputs.parse(o.long_inputs, "--long-inputs");
      auto& d = o.translate.decode;
      d.strategy = nmt::decode::kStrategies.parse(o.strategy, "--strategy");
      if (o.greedy) {
        if (d.strategy != nmt::decode::Strategy::kBeam) {
          throw std::invalid_argument("--greedy and --strategy " + o.strategy + ": choose one");
        }
        d.strategy = nmt::decode::Strategy::kGreedy;
      }
      d.validate();
    } catch (const std::invalid_argument& e) {
      throw nmt::UsageError(e.what());
    }
    o.given = nmt::apps::given_beam_flags(app);
    return run(o);
  });
}
