// nmt-translate: beam search (or greedy) decoding of raw text or of a shard split with a trained
// or averaged checkpoint; detokenized output, one line per input line, in input order. A source
// longer than the model's source positions is truncated (default) or, with --long-inputs split,
// translated in pieces whose translations share its output line.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "common/atomic_file.h"
#include "common/cli.h"
#include "preprocess/shard_format.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/decode/attention_svg.h"
#include "trainer/decode/translator.h"
#include "trainer/runtime/blas_backend.h"
#include "trainer/runtime/device.h"
#include "trainer/runtime/precision.h"

namespace {

namespace fs = std::filesystem;

struct Options {
  std::string checkpoint, spm_model, input, output, data_dir, split, attention_dir, device = "cpu";
  std::string precision = "auto";
  std::string long_inputs = "truncate";
  std::vector<std::int64_t> attention_lines;
  int threads = 0;
  nmt::decode::TranslateOptions translate;
};

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream file;
  if (!path.empty() && path != "-") {
    file.open(path);
    if (!file) throw std::runtime_error(path + ": cannot open the input");
  }
  std::istream& in = path.empty() || path == "-" ? std::cin : file;
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

std::string find_spm_model(const Options& o, const nmt::RunConfig& config) {
  if (!o.spm_model.empty()) return o.spm_model;
  const std::string dir = o.data_dir.empty() ? config.data.dir : o.data_dir;
  const std::string guess = (fs::path(dir) / nmt::preprocess::kVocabularyFile).string();
  if (dir.empty() || !fs::exists(guess)) {
    throw std::runtime_error(
        "no SentencePiece model: pass --spm-model (the checkpoint's data.dir '" + dir +
        "' has none)");
  }
  return guess;
}

std::vector<std::vector<std::int64_t>> split_sources(const Options& o,
                                                     const std::string& vocab_sha) {
  nmt::preprocess::DatasetOptions same_vocab;
  same_vocab.expect_vocab_sha256 = vocab_sha;
  const auto data = nmt::preprocess::ShardDataset::open(o.data_dir, o.split, same_vocab);
  std::vector<std::vector<std::int64_t>> sources;
  for (const auto& pair : data) sources.emplace_back(pair.src.begin(), pair.src.end());
  return sources;
}

void write_alignments(nmt::decode::Translator& t, const nmt::preprocess::Vocabulary& vocab,
                      const Options& o, const std::vector<std::vector<std::int64_t>>& sources,
                      const std::vector<nmt::decode::Translation>& results) {
  fs::create_directories(o.attention_dir);
  const auto pieces = [&](const std::vector<std::int64_t>& ids) {
    std::vector<std::string> out;
    for (auto id : ids) out.push_back(vocab.piece(static_cast<std::int32_t>(id)));
    out.push_back("</s>");
    return out;
  };
  for (const auto line : o.attention_lines) {
    if (line < 1 || line > static_cast<std::int64_t>(sources.size())) {
      throw std::invalid_argument(
          fmt::format("--attention-lines {}: the input has {} lines", line, sources.size()));
    }
    const auto i = static_cast<std::size_t>(line - 1);
    if (results[i].pieces > 1) {
      spdlog::warn("--attention-lines {}: the line was split into {} pieces; no heatmap", line,
                   results[i].pieces);
      continue;
    }
    if (results[i].nbest.empty()) continue;
    auto source = sources[i];
    source.resize(std::min(source.size(), t.source_limit()));  // as it was translated
    const auto& output = results[i].nbest.front().tokens;
    const auto weights = t.alignment(source, output);
    const std::string path =
        (fs::path(o.attention_dir) / fmt::format("line-{}.svg", line)).string();
    nmt::write_file_atomically(
        path, nmt::decode::attention_svg(
                  pieces(source), pieces(output), weights,
                  fmt::format("line {}: cross-attention, last decoder layer", line)));
    spdlog::info("wrote {}", path);
  }
}

int run(const Options& o) {
  nmt::runtime::check_blas_backend();
  const auto device = nmt::runtime::select_device(o.device);
  if (device.is_cpu()) nmt::runtime::configure_cpu_threads(o.threads);
  const auto precision =
      nmt::runtime::resolve_precision(nmt::runtime::parse_precision(o.precision), device);
  spdlog::info("precision {} ({})", nmt::runtime::precision_name(precision.precision),
               precision.reason);
  const auto config = nmt::checkpoint::read_checkpoint_config(o.checkpoint);
  nmt::model::Transformer model(config.model);
  const auto state = nmt::checkpoint::load_checkpoint(o.checkpoint, *model, nullptr, config);
  const std::string spm_model = find_spm_model(o, config);
  const auto vocab = nmt::preprocess::Vocabulary::load(spm_model);
  nmt::checkpoint::check_vocabulary(o.checkpoint, state, vocab.sha256(), spm_model);
  if (vocab.size() != config.model.vocab_size) {
    throw std::runtime_error(
        fmt::format("the SentencePiece model has {} pieces but {} was trained with {}",
                    vocab.size(), o.checkpoint, config.model.vocab_size));
  }
  auto translate_options = o.translate;
  translate_options.precision = precision.precision;
  nmt::decode::Translator translator(model, vocab, device, translate_options);
  std::vector<std::vector<std::int64_t>> sources;
  if (!o.split.empty()) {
    sources = split_sources(o, vocab.sha256());
  } else {
    for (const auto& line : read_lines(o.input)) {
      sources.push_back(
          translator.encode_line(line, static_cast<std::int64_t>(sources.size()) + 1));
    }
  }
  const auto results = translator.translate_sources(sources);
  if (translator.truncated() > 0) {
    spdlog::warn("{} input line(s) truncated to the model's {} source positions",
                 translator.truncated(), config.model.max_positions);
  }
  if (translator.split() > 0) {
    spdlog::info("{} input line(s) split into pieces that fit the model's {} source positions",
                 translator.split(), config.model.max_positions);
  }
  // A file gets the whole output at once (a temporary name, checked writes, fsync, rename): a
  // full disk is an error naming it, and no half-written translation stays under its name.
  std::ostringstream text;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    for (std::size_t k = 0; k < r.nbest.size(); ++k) {
      if (o.translate.beam.nbest > 1) {
        text << i << " ||| " << r.texts[k] << " ||| " << fmt::format("{:.4f}", r.nbest[k].score)
             << "\n";
      } else {
        text << r.texts[k] << "\n";
      }
    }
    if (r.nbest.empty()) text << "\n";
  }
  if (o.output.empty()) {
    std::cout << text.str() << std::flush;
    if (!std::cout) throw std::runtime_error("cannot write the translations to stdout");
  } else {
    nmt::write_file_atomically(o.output, text.str());
  }
  if (!o.attention_dir.empty()) write_alignments(translator, vocab, o, sources, results);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Translate text or a shard split with a checkpoint (beam search, paper settings).",
               "nmt-translate"};
  Options o;
  nmt::LogOptions log;
  log.tool = "nmt-translate";
  app.add_option("--checkpoint", o.checkpoint, "Checkpoint (trained or nmt-average output)")
      ->required();
  app.add_option("--spm-model", o.spm_model,
                 "SentencePiece model (default: spm.model of the data dir)");
  app.add_option("--input", o.input, "Input text, one sentence a line (default: stdin)");
  app.add_option("--output", o.output, "Output file (default: stdout)");
  app.add_option("--data", o.data_dir, "Shard directory (with --split, or to find spm.model)");
  app.add_option("--split", o.split, "Translate this split's source side instead of text");
  app.add_option("--beam", o.translate.beam.beam_size, "Beam size")->capture_default_str();
  app.add_option("--alpha", o.translate.beam.length_penalty, "Length penalty alpha")
      ->capture_default_str();
  app.add_option("--max-len-offset", o.translate.beam.max_length_offset,
                 "Output length <= input + this")
      ->capture_default_str();
  app.add_option("--nbest", o.translate.beam.nbest,
                 "Hypotheses per sentence ('i ||| text ||| score')")
      ->capture_default_str();
  app.add_flag("--greedy", o.translate.greedy, "Greedy decoding instead of beam search");
  app.add_option("--batch-tokens", o.translate.batch_tokens, "Padded source tokens per batch")
      ->capture_default_str();
  app.add_option("--device", o.device, "cpu, cuda, cuda:N or auto")
      ->capture_default_str()
      ->check(nmt::parsed_by(nmt::runtime::check_device_name));
  app.add_option("--threads", o.threads, "CPU threads (0: all cores)");
  app.add_option("--precision", o.precision,
                 "auto (bf16 where the device runs it natively and faster), fp32, bf16, fp16")
      ->capture_default_str()
      ->check(nmt::parsed_by(nmt::runtime::parse_precision));
  app.add_option("--long-inputs", o.long_inputs,
                 "A line longer than the model's source positions: truncate (translate its "
                 "first pieces) or split (translate it in pieces, joined on one output line)")
      ->capture_default_str();
  app.add_option("--attention-svg", o.attention_dir, "Write cross-attention heatmaps (SVG) here");
  app.add_option("--attention-lines", o.attention_lines, "1-based input lines to draw")
      ->delimiter(',');
  nmt::add_logging_flags(app, log);
  return nmt::run_tool(app, log, argc, argv, [&] {
    if (!o.split.empty() && o.data_dir.empty()) throw nmt::UsageError("--split needs --data");
    try {
      o.translate.long_inputs = nmt::decode::kLongInputs.parse(o.long_inputs, "--long-inputs");
    } catch (const std::invalid_argument& e) {
      throw nmt::UsageError(e.what());
    }
    return run(o);
  });
}
