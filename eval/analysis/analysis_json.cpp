// The JSON document of the error-analysis report (eval/analysis/analysis_report.h): format
// "nmt-analysis", version 1. Scores are rounded to 4 decimals; lines are 1-based.

#include <cmath>

#include "eval/analysis/analysis_report.h"

namespace nmt::eval::analysis {
namespace {

using Json = nlohmann::ordered_json;

double round4(double value) {
  return std::round(value * 1e4) / 1e4;
}

Json totals_json(const Totals& t) {
  Json j;
  j["sentences"] = t.sentences;
  const bool empty = t.sentences == 0;  // no score: null, not a misleading 0
  j["bleu"] = empty ? Json() : Json(round4(t.bleu));
  j["chrf"] = empty ? Json() : Json(round4(t.chrf));
  j["length_ratio"] = empty ? Json() : Json(round4(t.length_ratio));
  j["hyp_tokens"] = t.hyp_tokens;
  j["ref_tokens"] = t.ref_tokens;
  return j;
}

Json sentence_json(const SentenceResult& r, std::size_t i) {
  Json j;
  j["line"] = i + 1;
  j["chrf"] = round4(r.chrf);
  j["bleu"] = round4(r.bleu);
  j["hyp_tokens"] = r.hyp_tokens;
  j["ref_tokens"] = r.ref_tokens;
  j["source_fraction"] = round4(r.source_fraction);
  if (r.repetition) {
    j["repetition"] = {{"ngram", r.repetition->ngram},
                       {"order", r.repetition->order},
                       {"count", r.repetition->count},
                       {"consecutive", r.repetition->consecutive},
                       {"position", r.repetition->position}};
  }
  j["omission"] = r.omission;
  j["copy"] = r.copy;
  return j;
}

Json lines(const std::vector<std::size_t>& indices) {
  Json j = Json::array();
  for (const auto i : indices) j.push_back(i + 1);
  return j;
}

Json system_json(const Analysis& analysis, const AnalysisInput& input, std::size_t k) {
  const auto& s = analysis.systems[k];
  const auto& hyps = input.systems[k].hypotheses;
  Json j;
  j["name"] = s.name;
  j["file"] = s.file;
  j["corpus"] = totals_json(s.corpus);
  j["counts"] = {{"repetitions", s.repetitions.size()},
                 {"omissions", s.omissions.size()},
                 {"copies", s.copies.size()}};
  j["buckets"] = Json::array();
  for (std::size_t b = 0; b < s.buckets.size(); ++b) {
    auto bucket = totals_json(s.buckets[b]);
    bucket["label"] = analysis.buckets[b].label();
    j["buckets"].push_back(std::move(bucket));
  }
  j["worst"] = Json::array();
  for (const auto i : s.worst) {
    j["worst"].push_back({{"line", i + 1},
                          {"chrf", round4(s.sentences[i].chrf)},
                          {"bleu", round4(s.sentences[i].bleu)},
                          {"source", input.sources[i]},
                          {"reference", input.references[i]},
                          {"hypothesis", hyps[i]}});
  }
  j["repetitions"] = lines(s.repetitions);
  j["omissions"] = lines(s.omissions);
  j["copies"] = lines(s.copies);
  j["sentences"] = Json::array();
  for (std::size_t i = 0; i < s.sentences.size(); ++i) {
    j["sentences"].push_back(sentence_json(s.sentences[i], i));
  }
  return j;
}

Json difference_json(const Analysis& analysis, const AnalysisInput& input,
                     const PairDifference& d) {
  const auto& a = analysis.systems[d.a];
  const auto& b = analysis.systems[d.b];
  Json j;
  j["systems"] = {a.name, b.name};
  j["sentences"] = Json::array();
  for (const auto i : d.sentences) {
    j["sentences"].push_back(
        {{"line", i + 1},
         {"chrf", {round4(a.sentences[i].chrf), round4(b.sentences[i].chrf)}},
         {"source", input.sources[i]},
         {"reference", input.references[i]},
         {"hypotheses", {input.systems[d.a].hypotheses[i], input.systems[d.b].hypotheses[i]}}});
  }
  return j;
}

Json options_json(const AnalysisOptions& o) {
  const auto& d = o.detectors;
  return {{"worst", o.worst},
          {"differences", o.differences},
          {"bucket_edges", o.bucket_edges},
          {"repeat_order", d.repeat_order},
          {"max_tandem_order", d.max_tandem_order},
          {"omission_ratio", d.omission_ratio},
          {"omission_min_tokens", d.omission_min_tokens},
          {"copy_fraction", d.copy_fraction},
          {"copy_min_words", d.copy_min_words}};
}

}  // namespace

nlohmann::ordered_json report_json(const Analysis& analysis, const AnalysisInput& input,
                                   const AnalysisOptions& options) {
  Json j;
  j["format"] = "nmt-analysis";
  j["version"] = 1;
  j["source"] = input.source_file;
  j["reference"] = input.reference_file;
  j["sentences"] = analysis.sentences;
  j["chrf_name"] = analysis.chrf_name;
  j["signatures"] = {{"bleu", analysis.bleu_signature},
                     {"sentence_bleu", analysis.sentence_bleu_signature},
                     {"chrf", analysis.chrf_signature}};
  j["options"] = options_json(options);
  j["buckets"] = Json::array();
  for (const auto& b : analysis.buckets) {
    j["buckets"].push_back({{"label", b.label()},
                            {"min_words", b.min_words},
                            {"max_words", b.max_words < 0 ? Json() : Json(b.max_words)},
                            {"sentences", b.sentences}});
  }
  j["systems"] = Json::array();
  for (std::size_t k = 0; k < analysis.systems.size(); ++k) {
    j["systems"].push_back(system_json(analysis, input, k));
  }
  j["differences"] = Json::array();
  for (const auto& d : analysis.differences) {
    j["differences"].push_back(difference_json(analysis, input, d));
  }
  return j;
}

}  // namespace nmt::eval::analysis
