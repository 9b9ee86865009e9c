// nmt-analyze: error analysis of translations (eval/analysis/error_analysis.h): per-sentence chrF
// and BLEU, the worst sentences, scores by source length, repetitions, omissions and untranslated
// copies, and where systems differ most, written as DIR/analysis.{md,json,svg}. With
// --record-run, the report is recorded as an artifact (kind "analysis") of a tracked run, with its
// text, and the chart as one of kind "analysis_chart", so that the dashboard can show both.
// Inputs are read by eval/analysis/analysis_input.h (gzip too; valid UTF-8, no empty reference).

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "apps/tool_main.h"
#include "common/checked_paths.h"
#include "common/cli.h"
#include "common/environment.h"
#include "eval/analysis/analysis_input.h"
#include "eval/analysis/analysis_report.h"
#include "eval/analysis/error_analysis.h"
#include "eval/metrics/tokenizer_13a.h"
#include "tracker/api/limits.h"
#include "tracker/client/tracker_reader.h"
#include "tracker/view/human_format.h"
#include "tracker/view/table_format.h"

namespace {

namespace analysis = nmt::eval::analysis;
using nmt::tracker::printable;

struct Options {
  analysis::InputFiles files;
  std::string out;
  std::string buckets = "5,10,15,20,30,40";
  std::int64_t record_run = 0;  // 0: none
  nmt::tracker::DaemonFlags daemon;
  analysis::AnalysisOptions analysis;
};

std::vector<int> parse_buckets(const std::string& text) {
  std::vector<int> edges;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const auto end = std::min(text.find(',', begin), text.size());
    const auto piece = text.substr(begin, end - begin);
    std::size_t used = 0;
    int value = -1;
    try {
      value = std::stoi(piece, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (piece.empty() || used != piece.size() || value < 0 ||
        (!edges.empty() && value <= edges.back())) {
      throw std::invalid_argument("--buckets takes ascending word counts like 5,10,20, not '" +
                                  text + "'");
    }
    edges.push_back(value);
    begin = end + 1;
  }
  return edges;
}

// Records the file at `path` as an artifact of `kind` of the run, with its text when that is
// within the daemon's default limit (a larger file is recorded by its path alone); the id.
std::int64_t record_artifact(nmt::tracker::TrackerReader& tracker, std::int64_t run_id,
                             const std::string& kind, const std::string& path) {
  nmt::tracker::api::ArtifactRecord record;
  record.kind = kind;
  record.path = std::filesystem::absolute(path).string();
  const std::size_t limit = nmt::tracker::api::WriteLimits{}.max_content_bytes;
  try {
    record.content = nmt::read_regular_file(path, limit,
                                            "the artifact (within the daemon's "
                                            "default limit)");
  } catch (const std::runtime_error& e) {
    spdlog::warn("{}; recorded by its path alone", printable(e.what()));
  }
  return tracker.log_artifact(run_id, record).artifact_id;
}

// `text` cut to `max_chars` code points (then "…"); never inside a UTF-8 sequence.
std::string cut(const std::string& text, std::size_t max_chars) {
  std::size_t chars = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool continuation = (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80;
    if (!continuation && chars++ == max_chars) return text.substr(0, i) + "…";
  }
  return text;
}

// The summary on stdout: figures, then each system's worst sentence, every text printable().
void print_summary(const analysis::Analysis& a, const analysis::AnalysisInput& input,
                   const analysis::ReportFiles& files) {
  std::cout << printable(fmt::format("{}, {}: report {}",
                                     nmt::tracker::format_quantity(
                                         static_cast<std::int64_t>(a.sentences), "sentence"),
                                     nmt::tracker::format_quantity(
                                         static_cast<std::int64_t>(a.systems.size()), "system"),
                                     files.markdown))
            << "\n";
  for (std::size_t k = 0; k < a.systems.size(); ++k) {
    const auto& s = a.systems[k];
    std::cout << printable(fmt::format(
                     "{}: BLEU {:.2f}, {} {:.2f}, length ratio {:.3f}; {} repetitions, {} "
                     "omissions, {} copies",
                     s.name, s.corpus.bleu, a.chrf_name, s.corpus.chrf, s.corpus.length_ratio,
                     s.repetitions.size(), s.omissions.size(), s.copies.size()))
              << "\n";
    if (s.worst.empty()) continue;
    const auto i = s.worst.front();
    const auto& hyp = input.systems[k].hypotheses[i];
    std::cout << "  worst: line " << i + 1 << " ("
              << fmt::format("{} {:.1f}", a.chrf_name, s.sentences[i].chrf)
              << "): " << (hyp.empty() ? "(empty)" : printable(cut(hyp, 100))) << "\n";
  }
}

int run(Options& o) {
  try {
    analysis::system_names(o.files);
  } catch (const std::invalid_argument& e) {
    throw nmt::UsageError(e.what());
  }
  const bool daemon_flags =
      !o.daemon.url.empty() || !o.daemon.port_file.empty() || !o.daemon.token_file.empty();
  if (daemon_flags && o.record_run == 0) {
    throw nmt::UsageError("--url, --port-file and --token-file only go with --record-run");
  }
  o.analysis.bucket_edges = parse_buckets(o.buckets);
  try {
    o.analysis.validate();
  } catch (const std::invalid_argument& e) {
    throw nmt::UsageError(e.what());
  }
  std::optional<nmt::tracker::DaemonAddress> daemon;
  if (o.record_run != 0) {  // before the work: a missing address is an argument error
    try {
      daemon = nmt::tracker::find_daemon(o.daemon, nmt::process_environment);
    } catch (const std::invalid_argument& e) {
      throw nmt::UsageError(e.what());
    }
  }
  const auto start = std::chrono::steady_clock::now();
  const auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  const auto input = analysis::read_analysis_input(o.files);
  spdlog::debug("read the inputs in {:.2f} s", seconds());
  const auto result = analysis::analyze(input, o.analysis);
  spdlog::debug("analyzed by {:.2f} s", seconds());
  const auto files = analysis::write_report(o.out, result, input, o.analysis);
  spdlog::debug("wrote the report by {:.2f} s", seconds());
  print_summary(result, input, files);
  if (daemon) {
    nmt::tracker::TrackerReader tracker(*daemon);
    const auto chart = record_artifact(tracker, o.record_run, "analysis_chart", files.svg);
    const auto id = record_artifact(tracker, o.record_run, "analysis", files.markdown);
    spdlog::debug("chart recorded as artifact {}", chart);
    std::cout << printable(
                     fmt::format("recorded as artifact {} (analysis) of run {}", id, o.record_run))
              << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Error analysis of translations: sentence scores, worst sentences, scores by source "
      "length, repetitions, omissions, untranslated copies, system differences.",
      "nmt-analyze"};
  Options o;
  auto& a = o.analysis;
  app.add_option("--src", o.files.source, "Source sentences, one per line (.gz too)")->required();
  app.add_option("--ref", o.files.reference, "Reference translations, one per source line")
      ->required();
  app.add_option("--hyp", o.files.hypotheses, "Hypotheses of a system; repeat for several systems")
      ->required();
  app.add_option("--name", o.files.names, "A name per --hyp, in order (default: the file names)");
  app.add_option("--out", o.out, "Report folder: analysis.md, analysis.json, analysis.svg")
      ->required();
  app.add_option("--worst", a.worst, "Worst sentences listed per system")->capture_default_str();
  app.add_option("--differences", a.differences, "Sentences listed per pair of systems")
      ->capture_default_str();
  app.add_option("--examples", a.examples, "Flagged sentences shown per kind in the Markdown")
      ->capture_default_str();
  app.add_option("--buckets", o.buckets, "Source-length bucket bounds in words, ascending")
      ->capture_default_str()
      ->check(nmt::parsed_by(parse_buckets));
  app.add_option("--tokenize", a.bleu.tokenize, "BLEU tokenizer: 13a, none, intl, char or zh")
      ->capture_default_str()
      ->check(CLI::IsMember(std::vector<std::string>(std::begin(nmt::eval::kBleuTokenizers),
                                                     std::end(nmt::eval::kBleuTokenizers))));
  app.add_option("--chrf-word-order", a.chrf.word_order, "chrF word n-gram order (2: chrF++)")
      ->capture_default_str()
      ->check(CLI::Range(0, 9));
  app.add_option("--threads", a.threads, "Scoring threads (0: one per core)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--record-run", o.record_run,
                 "Record the report as an artifact (kind \"analysis\") of this tracked run id")
      ->check(CLI::PositiveNumber);
  app.add_option("--url", o.daemon.url, "With --record-run: nmt-trackerd's URL");
  app.add_option("--port-file", o.daemon.port_file, "With --record-run: nmt-trackerd's port file");
  app.add_option("--token-file", o.daemon.token_file, "With --record-run: the bearer token file");
  return nmt::apps::run_main(app, argc, argv, [&] { return run(o); });
}
