// The Markdown page of the error-analysis report (eval/analysis/analysis_report.h).

#include <fmt/format.h>

#include <cstring>

#include "common/utf8.h"
#include "eval/analysis/analysis_report.h"

namespace nmt::eval::analysis {
namespace {

std::string num(double value, int decimals) {
  return fmt::format("{:.{}f}", value, decimals);
}

std::string table_row(const std::vector<std::string>& cells) {
  std::string row = "|";
  for (const auto& cell : cells) row += " " + cell + " |";
  return row + "\n";
}

std::string table_head(const std::vector<std::string>& header) {
  std::vector<std::string> rule(header.size(), "---");
  return table_row(header) + table_row(rule);
}

// "10 of 37" / "all 7".
std::string shown(std::size_t listed, std::size_t total) {
  return listed == total ? fmt::format("all {}", total) : fmt::format("{} of {}", listed, total);
}

struct Page {
  const Analysis& analysis;
  const AnalysisInput& input;
  const AnalysisOptions& options;
  std::string out;

  std::string text(const std::string& s) const { return markdown_cell(s); }
  std::string line(std::size_t i) const { return std::to_string(i + 1); }

  void header() {
    out += "# Error analysis\n\n";
    out += fmt::format("Source {} ({} lines), reference {}.\n\n", text(input.source_file),
                       analysis.sentences, text(input.reference_file));
    out += fmt::format(
        "Sentence scores are sacreBLEU's sentence_score: {} ({}) and BLEU with effective order "
        "and exp smoothing ({}). Corpus and bucket scores come from summed statistics ({}), so "
        "they equal nmt-bleu's. Flags are heuristics that point at sentences to read: a "
        "repetition is an n-gram repeated back to back or a {}-gram occurring twice (not so in "
        "the reference); an omission a hypothesis under {:.0f}% of its reference's and source's "
        "tokens; a copy a hypothesis with {:.0f}% or more of its words from the source.\n\n",
        analysis.chrf_name, analysis.chrf_signature, analysis.sentence_bleu_signature,
        analysis.bleu_signature, options.detectors.repeat_order,
        100 * options.detectors.omission_ratio, 100 * options.detectors.copy_fraction);
  }

  void systems() {
    out += "## Systems\n\n";
    out += table_head({"system", "file", "BLEU", analysis.chrf_name, "length ratio", "repetitions",
                       "omissions", "copies"});
    for (const auto& s : analysis.systems) {
      out += table_row({text(s.name), text(s.file), num(s.corpus.bleu, 2), num(s.corpus.chrf, 2),
                        num(s.corpus.length_ratio, 3), std::to_string(s.repetitions.size()),
                        std::to_string(s.omissions.size()), std::to_string(s.copies.size())});
    }
    out += "\n";
  }

  void buckets(const std::string& svg_name) {
    out += "## Scores by source length\n\n";
    out += fmt::format("![BLEU and {} by source length]({})\n\n", analysis.chrf_name, svg_name);
    std::vector<std::string> header{"source words", "sentences"};
    for (const auto& s : analysis.systems) {
      for (const auto* metric : {"BLEU", analysis.chrf_name.c_str(), "ratio"}) {
        header.push_back(text(s.name) + " " + metric);
      }
    }
    out += table_head(header);
    for (std::size_t b = 0; b < analysis.buckets.size(); ++b) {
      const auto& bucket = analysis.buckets[b];
      std::vector<std::string> row{bucket.label(), std::to_string(bucket.sentences)};
      for (const auto& s : analysis.systems) {
        const auto& t = s.buckets[b];
        const bool empty = t.sentences == 0;
        row.push_back(empty ? "-" : num(t.bleu, 2));
        row.push_back(empty ? "-" : num(t.chrf, 2));
        row.push_back(empty ? "-" : num(t.length_ratio, 3));
      }
      out += table_row(row);
    }
    out += "\n";
  }

  const std::string& hyp(std::size_t system, std::size_t i) const {
    return input.systems[system].hypotheses[i];
  }

  void worst(std::size_t k) {
    const auto& s = analysis.systems[k];
    out += fmt::format("### Worst sentences ({}, by sentence {})\n\n",
                       shown(s.worst.size(), analysis.sentences), analysis.chrf_name);
    out += table_head({"line", analysis.chrf_name, "BLEU", "source", "reference", "hypothesis"});
    for (const auto i : s.worst) {
      const auto& r = s.sentences[i];
      out += table_row({line(i), num(r.chrf, 1), num(r.bleu, 1), text(input.sources[i]),
                        text(input.references[i]), text(hyp(k, i))});
    }
    out += "\n";
  }

  void flagged(std::size_t k) {
    const auto& s = analysis.systems[k];
    const auto limit = [&](const std::vector<std::size_t>& v) {
      return std::min(v.size(), options.examples);
    };
    out +=
        fmt::format("### Repetitions ({})\n\n", shown(limit(s.repetitions), s.repetitions.size()));
    out += table_head({"line", "repeated", "times", "hypothesis", "reference"});
    for (std::size_t e = 0; e < limit(s.repetitions); ++e) {
      const auto i = s.repetitions[e];
      const auto& rep = *s.sentences[i].repetition;
      out += table_row({line(i), text(rep.ngram),
                        fmt::format("{}{}", rep.count, rep.consecutive ? " in a row" : ""),
                        text(hyp(k, i)), text(input.references[i])});
    }
    out += fmt::format("\n### Likely omissions ({})\n\n",
                       shown(limit(s.omissions), s.omissions.size()));
    out += table_head({"line", "tokens hyp/ref", "source", "reference", "hypothesis"});
    for (std::size_t e = 0; e < limit(s.omissions); ++e) {
      const auto i = s.omissions[e];
      const auto& r = s.sentences[i];
      out += table_row({line(i), fmt::format("{}/{}", r.hyp_tokens, r.ref_tokens),
                        text(input.sources[i]), text(input.references[i]), text(hyp(k, i))});
    }
    out +=
        fmt::format("\n### Untranslated copies ({})\n\n", shown(limit(s.copies), s.copies.size()));
    out += table_head({"line", "words from source", "source", "reference", "hypothesis"});
    for (std::size_t e = 0; e < limit(s.copies); ++e) {
      const auto i = s.copies[e];
      out += table_row({line(i), fmt::format("{:.0f}%", 100 * s.sentences[i].source_fraction),
                        text(input.sources[i]), text(input.references[i]), text(hyp(k, i))});
    }
    out += "\n";
  }

  void difference(const PairDifference& d) {
    const auto& a = analysis.systems[d.a];
    const auto& b = analysis.systems[d.b];
    out += fmt::format("## Where {} and {} differ most (sentence {})\n\n", text(a.name),
                       text(b.name), analysis.chrf_name);
    out += table_head({"line", text(a.name), text(b.name), "source", "reference",
                       text(a.name) + " hypothesis", text(b.name) + " hypothesis"});
    for (const auto i : d.sentences) {
      out += table_row({line(i), num(a.sentences[i].chrf, 1), num(b.sentences[i].chrf, 1),
                        text(input.sources[i]), text(input.references[i]), text(hyp(d.a, i)),
                        text(hyp(d.b, i))});
    }
    out += "\n";
  }
};

}  // namespace

std::string markdown_cell(std::string_view text, std::size_t max_chars) {
  static constexpr const char* kEscaped = "\\|*_`[]<>~#";
  std::string out;
  std::size_t chars = 0;
  for (std::size_t i = 0; i < text.size(); ++chars) {
    if (chars == max_chars) return out + "…";
    const auto c = static_cast<unsigned char>(text[i]);
    const auto n = utf8_sequence_length(text, i);
    const bool c1 = n == 2 && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0;
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD: the tools reject invalid UTF-8 before this
      ++i;
      continue;
    }
    if (c < 0x20 || c == 0x7F || c1) {
      out.push_back(' ');  // line breaks and other controls would break the table
    } else if (c == '&') {
      out += "&amp;";
    } else if (n == 1 && c < 0x80 && std::strchr(kEscaped, c) != nullptr) {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else {
      out.append(text.substr(i, n));
    }
    i += n;
  }
  return out;
}

std::string render_markdown(const Analysis& analysis, const AnalysisInput& input,
                            const AnalysisOptions& options, const std::string& svg_name) {
  Page page{analysis, input, options, {}};
  page.header();
  page.systems();
  page.buckets(svg_name);
  for (std::size_t k = 0; k < analysis.systems.size(); ++k) {
    page.out += fmt::format("## {}\n\n", page.text(analysis.systems[k].name));
    page.worst(k);
    page.flagged(k);
  }
  for (const auto& d : analysis.differences) page.difference(d);
  return page.out;
}

}  // namespace nmt::eval::analysis
