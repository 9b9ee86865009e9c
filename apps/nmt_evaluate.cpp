// nmt-evaluate: a checkpoint's scores on a shard split (paper Table 3's dev figures): perplexity
// per target word piece (teacher-forced) and corpus BLEU of its beam-search translations against
// the split's detokenized targets. With --record, the scores go to the tracked run of the training
// run directory (its run.json: --run-dir, by default the folder above the checkpoint's
// checkpoints/ folder), at the daemon of the --tracker-* flags, else of the checkpoint's config,
// else of the environment (NMT_TRACKER_URL...), as nmt-sweep does for each row; what the daemon
// does not take waits in the run directory for `nmt-tracker sync` (tracking/run_records.h).
// With --analyze DIR, the translations also go through nmt-analyze's error analysis
// (eval/analysis/error_analysis.h) into DIR, recorded with --record as an artifact of kind
// "analysis".

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "apps/runtime_flags.h"
#include "apps/tool_main.h"
#include "apps/tracker_flags.h"
#include "common/cli.h"
#include "common/run_layout.h"
#include "eval/analysis/analysis_report.h"
#include "eval/analysis/error_analysis.h"
#include "eval/metrics/bleu.h"
#include "preprocess/shard_format.h"
#include "tracker/client/daemon_address.h"
#include "tracking/run_records.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/checkpoint/checkpoint_model.h"
#include "trainer/checkpoint/checkpoint_vocabulary.h"
#include "trainer/decode/translator.h"
#include "trainer/runtime/blas_backend.h"
#include "trainer/train/evaluation.h"

namespace {

struct Options {
  std::string checkpoint, data_dir, split = "valid", run_dir;
  nmt::apps::RuntimeFlags runtime;       // --device, --threads, --precision
  nmt::tracker::DaemonSettings tracker;  // the --tracker-* flags
  std::string analyze_dir;  // --analyze: the error-analysis report's folder; empty: none
  nmt::train::BleuSettings bleu;
  bool record = false, json = false;
  nmt::apps::GivenBeam given;  // else the checkpoint's decode.beam / alpha
};

// The training run directory of the checkpoint scored: --run-dir, else the checkpoint's
// (common/run_layout.h).
std::string run_dir_of(const Options& o) {
  return o.run_dir.empty() ? nmt::run_layout::run_dir_of_checkpoint(o.checkpoint) : o.run_dir;
}

// The split's sources and references and the model's translations, detokenized, decoded as
// split_bleu decodes them (same options), but kept for the error analysis.
nmt::eval::analysis::AnalysisInput translate_split(nmt::model::Transformer& model,
                                                   const nmt::preprocess::ShardDataset& data,
                                                   const nmt::preprocess::Vocabulary& vocab,
                                                   c10::Device device,
                                                   const nmt::train::BleuSettings& settings) {
  auto t = nmt::train::split_translations(model, data, vocab, device, settings);
  nmt::eval::analysis::AnalysisInput input;
  input.sources = std::move(t.sources);
  input.references = std::move(t.references);
  input.systems.emplace_back().hypotheses = std::move(t.hypotheses);
  return input;
}

// Corpus BLEU of the split (as split_bleu computes it) and, with --analyze, the report's page.
std::pair<double, std::string> bleu_and_analysis(const Options& o, const std::string& data_dir,
                                                 nmt::model::Transformer& model,
                                                 const nmt::preprocess::ShardDataset& data,
                                                 const nmt::preprocess::Vocabulary& vocab,
                                                 c10::Device device,
                                                 const nmt::train::BleuSettings& settings) {
  if (o.analyze_dir.empty()) {
    return {nmt::train::split_bleu(model, data, vocab, device, settings), ""};
  }
  namespace analysis = nmt::eval::analysis;
  auto input = translate_split(model, data, vocab, device, settings);
  input.source_file = fmt::format("{}, split {}, sources", data_dir, o.split);
  input.reference_file = fmt::format("{}, split {}, targets", data_dir, o.split);
  input.systems[0].name = std::filesystem::path(o.checkpoint).filename().string();
  input.systems[0].file = o.checkpoint;
  const double bleu =
      nmt::eval::corpus_bleu(input.systems[0].hypotheses, {input.references}, {}).score.score;
  const analysis::AnalysisOptions options;
  const auto files =
      analysis::write_report(o.analyze_dir, analysis::analyze(input, options), input, options);
  spdlog::info("error analysis in {}", files.markdown);
  return {bleu, std::filesystem::absolute(files.markdown).string()};
}

int evaluate(const Options& o) {
  auto [config, state, model] = nmt::checkpoint::load_for_inference(o.checkpoint);
  if (!o.data_dir.empty()) config.data.dir = o.data_dir;
  std::optional<nmt::tracking::RunRecorder> recorder;
  if (o.record) {
    recorder.emplace(nmt::apps::record_daemon(o.tracker, config.tracker), run_dir_of(o),
                     "nmt-evaluate");
  }
  const auto runtime = nmt::apps::resolve_runtime(o.runtime, config);
  const auto device = runtime.device;
  model->to(device);

  const auto data = nmt::preprocess::ShardDataset::open(config.data.dir, o.split);
  nmt::checkpoint::check_vocabulary(o.checkpoint, state, data.manifest().vocab_sha256,
                                    config.data.dir + " (manifest)");
  const nmt::data::TokenBatcher batches(data, config.data, config.train.seed);
  const auto score =
      nmt::train::score_split(model, batches, config.train.label_smoothing, runtime.precision,
                              device, nmt::distributed::Communicator::self());
  const auto vocab = nmt::checkpoint::checkpoint_vocabulary(o.checkpoint, state, config, {});
  auto bleu_settings = o.bleu;
  bleu_settings.precision = runtime.precision;
  bleu_settings.workers = runtime.threads;
  nmt::apps::beam_and_alpha_of_run(o.given, config.decode, bleu_settings.beam, bleu_settings.alpha);
  spdlog::info("beam {}, alpha {}", bleu_settings.beam, bleu_settings.alpha);
  // Counted before decoding: precision int8 quantizes the model, which releases its fp32 weights.
  const std::int64_t parameters = model->parameter_count();
  const auto [bleu, report] =
      bleu_and_analysis(o, config.data.dir, model, data, vocab, device, bleu_settings);

  if (recorder) {
    nmt::tracking::RunRecords records;
    auto& eval = records.evals.emplace_back();
    eval.split = o.split;
    eval.step = state.step;
    eval.checkpoint = o.checkpoint;
    eval.bleu = bleu;
    eval.perplexity = score.ppl;
    eval.signature =
        fmt::format("nmt-evaluate|beam:{}|alpha:{}", bleu_settings.beam, bleu_settings.alpha);
    // The checkpoint scored, an artifact of the run (nmt-average's output as kind "averaged").
    const auto scored = std::filesystem::absolute(o.checkpoint).lexically_normal().string();
    if (state.averaged_from > 0) {
      records.artifacts.push_back({"averaged", scored, state.step, state.averaged_from});
    } else {
      records.artifacts.push_back({"checkpoint", scored, state.step, std::nullopt});
    }
    if (!report.empty()) {
      records.artifacts.push_back({"analysis", report, state.step, std::nullopt});
    }
    const auto recorded = recorder->record(records);
    if (recorded.spool_file.empty()) {
      spdlog::info("recorded in run {} (of {})", recorded.run_id.value_or(-1), recorder->run_dir());
    }
  }
  if (o.json) {
    std::cout << nlohmann::json{{"checkpoint", o.checkpoint},
                                {"split", o.split},
                                {"step", state.step},
                                {"tokens", score.tokens},
                                {"nll", score.nll},
                                {"perplexity", score.ppl},
                                {"bleu", bleu},
                                {"beam", bleu_settings.beam},
                                {"alpha", bleu_settings.alpha},
                                {"parameters", parameters}}
                     .dump()
              << "\n";
  } else {
    std::cout << fmt::format(
        "{} on {} ({} target tokens): perplexity {:.3f}, BLEU {:.2f}, {} "
        "parameters\n",
        o.checkpoint, o.split, score.tokens, score.ppl, bleu, parameters);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Score a checkpoint on a shard split: perplexity and BLEU (Table 3's dev figures).",
               "nmt-evaluate"};
  Options o;
  nmt::apps::add_checkpoint_flag(app, o.checkpoint);
  app.add_option("--data", o.data_dir, "Shard directory (default: the checkpoint's data.dir)");
  app.add_option("--split", o.split, "Split to score")->capture_default_str();
  app.add_option("--beam", o.bleu.beam,
                 "Beam size (1: greedy; default: the checkpoint's decode.beam)");
  app.add_option("--alpha", o.bleu.alpha,
                 "Length penalty alpha (default: the checkpoint's decode.alpha)");
  app.add_option("--sentences", o.bleu.sentences, "Translate only the first N pairs (0: all)");
  nmt::apps::add_runtime_flags(app, o.runtime);
  app.add_flag("--record", o.record, "Record the scores in the checkpoint's tracker run");
  app.add_option("--run-dir", o.run_dir,
                 "With --record: the training run directory (its run.json names the tracked run; "
                 "default: the checkpoint's run directory)");
  nmt::apps::add_tracker_flags(
      app, o.tracker, "With --record: ", "the checkpoint's tracker.url or tracker.port_file");
  app.footer(
      "With --record, the tracker: --tracker-url or --tracker-port-file, else the checkpoint's "
      "tracker.url or tracker.port_file, else NMT_TRACKER_URL. Its token: --tracker-token-file, "
      "else tracker.token_file, else the file named by NMT_TRACKER_TOKEN_FILE. For https, the "
      "CAs: --tracker-ca-file, else tracker.ca_file, else NMT_TRACKER_CA_FILE, else the system's. "
      "An explicit flag beats the config, which beats the environment.");
  app.add_option("--analyze", o.analyze_dir,
                 "Also write nmt-analyze's error analysis of the translations into this folder "
                 "(with --record: recorded as an artifact of kind \"analysis\")");
  app.add_flag("--json", o.json, "Print one JSON object");
  return nmt::apps::run_main(app, argc, argv, [&] {
    nmt::runtime::check_blas_backend();
    o.given = nmt::apps::given_beam_flags(app);
    return evaluate(o);
  });
}
