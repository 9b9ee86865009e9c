#include "trainer/decode/diverse_beam.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace nmt::decode {
namespace {

void sort_by_score(std::vector<Hypothesis>& hypotheses) {
  std::stable_sort(hypotheses.begin(), hypotheses.end(),
                   [](const Hypothesis& x, const Hypothesis& y) { return x.score > y.score; });
}

}  // namespace

void DiverseOptions::validate() const {
  if (groups < 1)
    throw std::invalid_argument("diverse.groups must be at least 1 (1: plain beam search), got " +
                                std::to_string(groups));
  if (!(diversity_penalty >= 0) || !std::isfinite(diversity_penalty))
    throw std::invalid_argument(
        "diverse.diversity_penalty must be >= 0 (0: independent groups), "
        "got " +
        std::to_string(diversity_penalty));
}

std::vector<Hypothesis> diverse_nbest(std::vector<std::vector<Hypothesis>> groups,
                                      std::int64_t nbest) {
  std::vector<Hypothesis> heads, rest;
  for (auto& group : groups) {
    if (group.empty()) continue;
    sort_by_score(group);
    heads.push_back(std::move(group.front()));
    rest.insert(rest.end(), std::make_move_iterator(group.begin() + 1),
                std::make_move_iterator(group.end()));
  }
  sort_by_score(heads);
  sort_by_score(rest);
  heads.insert(heads.end(), std::make_move_iterator(rest.begin()),
               std::make_move_iterator(rest.end()));
  heads.resize(std::min(heads.size(), static_cast<std::size_t>(std::max<std::int64_t>(nbest, 0))));
  return heads;
}

std::vector<std::vector<Hypothesis>> diverse_beam_search(model::Transformer& model,
                                                         const at::Tensor& src,
                                                         const DecodeOptions& options) {
  auto o = options;
  o.strategy = Strategy::kDiverseBeam;
  o.validate();
  auto per_group = grouped_beam_search(model, src, o.beam, o.diverse.groups,
                                       o.diverse.diversity_penalty, o.repetition);
  std::vector<std::vector<Hypothesis>> results;
  for (auto& groups : per_group) results.push_back(diverse_nbest(std::move(groups), o.nbest));
  return results;
}

}  // namespace nmt::decode
