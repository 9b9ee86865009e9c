// sacreBLEU's lib_ter.py in C++ (see ter_shift.h): translation_edit_rate, _shift,
// _find_shifted_pairs, _perform_shift, trace_to_alignment and BeamEditDistance, with the same
// operation preferences so that the traces, hence the alignments and the shifts tried, are the
// same.

#include "eval/metrics/ter_shift.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace nmt::eval {
namespace {

constexpr int kMaxShiftSize = 10;
constexpr int kMaxShiftDist = 50;
constexpr int kBeamWidth = 25;
constexpr int kMaxCacheSize = 10000;
constexpr int kMaxShiftCandidates = 1000;
constexpr std::int64_t kInfinity = 10000000000000000;  // int(1e16)

// Edit operations, named as in the trace of rewriting the hypothesis into the reference.
enum Op : char { kNop = ' ', kSub = 's', kIns = 'i', kDel = 'd', kUndef = 'x' };

struct Cell {
  std::int64_t cost;
  char op;
};
using Row = std::vector<Cell>;

// Levenshtein distance against one reference, in a beam, with the rows of already seen hypothesis
// prefixes kept in a trie (node 0 is the root; a node holds the row after its word).
class BeamEditDistance {
 public:
  explicit BeamEditDistance(const std::vector<int>& ref) : ref_(ref) {
    const std::size_t n = ref_.size();
    initial_row_.resize(n + 1);
    for (std::size_t j = 0; j <= n; ++j) initial_row_[j] = {static_cast<std::int64_t>(j), kIns};
    nodes_.emplace_back();
  }

  // Distance and trace (one op per step, from the start).
  std::pair<std::int64_t, std::string> operator()(const std::vector<int>& hyp) {
    // Rows already known for the longest cached prefix.
    std::vector<const Row*> rows{&initial_row_};
    std::vector<int> path{0};
    for (const int word : hyp) {
      const auto it = nodes_[static_cast<std::size_t>(path.back())].children.find(word);
      if (it == nodes_[static_cast<std::size_t>(path.back())].children.end()) break;
      path.push_back(it->second);
      rows.push_back(&nodes_[static_cast<std::size_t>(it->second)].row);
    }
    const std::size_t start = rows.size() - 1;
    std::vector<Row> fresh = compute_rows(hyp, start, *rows.back());
    for (const Row& row : fresh) rows.push_back(&row);
    std::string trace = backtrace(hyp, rows);
    const std::int64_t distance = rows.back()->back().cost;
    add_to_cache(hyp, start, path.back(), fresh);
    return {distance, std::move(trace)};
  }

 private:
  struct Node {
    std::unordered_map<int, int> children;
    Row row;
  };

  std::vector<Row> compute_rows(const std::vector<int>& hyp, std::size_t start,
                                const Row& last_cached) const {
    const std::size_t n_ref = ref_.size(), n_hyp = hyp.size();
    const double length_ratio =
        n_hyp > 0 ? static_cast<double>(n_ref) / static_cast<double>(n_hyp) : 1.0;
    const auto beam = kBeamWidth < length_ratio / 2
                          ? static_cast<std::int64_t>(std::ceil(length_ratio / 2 + kBeamWidth))
                          : static_cast<std::int64_t>(kBeamWidth);
    std::vector<Row> rows(n_hyp - start, Row(n_ref + 1, Cell{kInfinity, kUndef}));
    for (std::size_t i = start + 1; i <= n_hyp; ++i) {
      const Row& prev = i == start + 1 ? last_cached : rows[i - start - 2];
      Row& row = rows[i - start - 1];
      const auto diag =
          static_cast<std::int64_t>(std::floor(static_cast<double>(i) * length_ratio));
      const std::int64_t min_j = std::max<std::int64_t>(0, diag - beam);
      std::int64_t max_j =
          std::min<std::int64_t>(static_cast<std::int64_t>(n_ref) + 1, diag + beam);
      if (i == n_hyp) max_j = static_cast<std::int64_t>(n_ref) + 1;
      for (std::int64_t jj = min_j; jj < max_j; ++jj) {
        const auto j = static_cast<std::size_t>(jj);
        if (j == 0) {
          row[0] = {prev[0].cost + 1, kDel};
          continue;
        }
        const bool same = hyp[i - 1] == ref_[j - 1];
        // Tercom's preference (match/substitution, then insertion, then deletion), with insertion
        // and deletion swapped because the trace is flipped before aligning.
        const Cell options[] = {{prev[j - 1].cost + (same ? 0 : 1), same ? kNop : kSub},
                                {prev[j].cost + 1, kDel},
                                {row[j - 1].cost + 1, kIns}};
        for (const Cell& option : options) {
          if (row[j].cost > option.cost) row[j] = option;
        }
      }
    }
    return rows;
  }

  std::string backtrace(const std::vector<int>& hyp, const std::vector<const Row*>& rows) const {
    std::string trace;
    std::size_t i = hyp.size(), j = ref_.size();
    while (i > 0 || j > 0) {
      const char op = (*rows[i])[j].op;
      trace.push_back(op);
      if (op == kSub || op == kNop) {
        --i;
        --j;
      } else if (op == kIns) {
        --j;
      } else if (op == kDel) {
        --i;
      } else {
        throw std::logic_error("TER: the edit-distance beam lost the path");
      }
    }
    std::reverse(trace.begin(), trace.end());
    return trace;
  }

  void add_to_cache(const std::vector<int>& hyp, std::size_t start, int node,
                    std::vector<Row>& fresh) {
    for (std::size_t k = 0; k < fresh.size(); ++k) {
      if (cache_size_ >= kMaxCacheSize) return;
      const int word = hyp[start + k];
      auto& children = nodes_[static_cast<std::size_t>(node)].children;
      const auto it = children.find(word);
      if (it != children.end()) {
        node = it->second;
        continue;
      }
      const int child = static_cast<int>(nodes_.size());
      nodes_[static_cast<std::size_t>(node)].children.emplace(word, child);
      nodes_.push_back(Node{{}, std::move(fresh[k])});
      ++cache_size_;
      node = child;
    }
  }

  const std::vector<int>& ref_;
  Row initial_row_;
  std::vector<Node> nodes_;
  int cache_size_ = 0;
};

struct Alignment {
  std::vector<std::int64_t> ref_to_hyp;  // align[pos_ref] = pos_hyp (-1: before the start)
  std::vector<int> ref_err, hyp_err;
};

// trace_to_alignment on the flipped trace: there, 'i' consumes a hypothesis word and 'd' a
// reference word, i.e. the unflipped 'd' and 'i'.
Alignment align_trace(const std::string& trace, std::size_t n_ref) {
  Alignment a;
  a.ref_to_hyp.assign(n_ref, -1);
  std::int64_t pos_hyp = -1, pos_ref = -1;
  for (const char op : trace) {
    if (op == kNop || op == kSub) {
      ++pos_hyp;
      ++pos_ref;
      a.ref_to_hyp[static_cast<std::size_t>(pos_ref)] = pos_hyp;
      a.hyp_err.push_back(op == kSub);
      a.ref_err.push_back(op == kSub);
    } else if (op == kDel) {  // flipped: insertion
      ++pos_hyp;
      a.hyp_err.push_back(1);
    } else {  // kIns, flipped: deletion
      ++pos_ref;
      a.ref_to_hyp[static_cast<std::size_t>(pos_ref)] = pos_hyp;
      a.ref_err.push_back(1);
    }
  }
  return a;
}

// _perform_shift, Python slice semantics (clamped bounds) included.
std::vector<int> perform_shift(const std::vector<int>& words, std::size_t start, std::size_t length,
                               std::size_t target) {
  const std::size_t n = words.size();
  const auto slice = [&](std::vector<int>& out, std::size_t from, std::size_t to) {
    from = std::min(from, n);
    to = std::min(to, n);
    if (from < to) out.insert(out.end(), words.begin() + from, words.begin() + to);
  };
  std::vector<int> out;
  out.reserve(n);
  if (target < start) {
    slice(out, 0, target);
    slice(out, start, start + length);
    slice(out, target, start);
    slice(out, start + length, n);
  } else if (target > start + length) {
    slice(out, 0, start);
    slice(out, start + length, target);
    slice(out, start, start + length);
    slice(out, target, n);
  } else {
    slice(out, 0, start);
    slice(out, start + length, length + target);
    slice(out, start, start + length);
    slice(out, length + target, n);
  }
  return out;
}

struct Candidate {
  std::int64_t gain, length, neg_start, neg_target;
  std::vector<int> words;
  bool better_than(const Candidate& o) const {
    if (gain != o.gain) return gain > o.gain;
    if (length != o.length) return length > o.length;
    if (neg_start != o.neg_start) return neg_start > o.neg_start;
    return neg_target > o.neg_target;  // equal keys mean the same shift: keep the first
  }
};

// One round of _shift: the best shift of `hyp`, or gain 0 and `hyp` itself.
std::pair<std::int64_t, std::vector<int>> best_shift(const std::vector<int>& hyp,
                                                     const std::vector<int>& ref,
                                                     BeamEditDistance& distance, int& checked) {
  const auto [pre_score, trace] = distance(hyp);
  const Alignment a = align_trace(trace, ref.size());
  const auto n_hyp = static_cast<std::int64_t>(hyp.size());
  const auto n_ref = static_cast<std::int64_t>(ref.size());
  bool have_best = false;
  Candidate best{};
  const auto any_error = [](const std::vector<int>& err, std::int64_t from, std::int64_t len) {
    const auto end = std::min<std::size_t>(err.size(), static_cast<std::size_t>(from + len));
    for (auto k = static_cast<std::size_t>(from); k < end; ++k) {
      if (err[k]) return true;
    }
    return false;
  };
  for (std::int64_t start_h = 0; start_h < n_hyp && checked < kMaxShiftCandidates; ++start_h) {
    for (std::int64_t start_r = 0; start_r < n_ref && checked < kMaxShiftCandidates; ++start_r) {
      if (std::abs(start_r - start_h) > kMaxShiftDist) continue;
      for (std::int64_t length = 1; length <= kMaxShiftSize; ++length) {
        const auto h = static_cast<std::size_t>(start_h + length - 1);
        const auto r = static_cast<std::size_t>(start_r + length - 1);
        if (hyp[h] != ref[r]) break;
        // The pair (start_h, start_r, length): worth trying only where both sides are wrong and
        // the block does not already cover the target.
        if (any_error(a.hyp_err, start_h, length) && any_error(a.ref_err, start_r, length)) {
          const std::int64_t aligned = a.ref_to_hyp[static_cast<std::size_t>(start_r)];
          if (!(start_h <= aligned && aligned < start_h + length)) {
            std::int64_t prev_idx = -1;
            for (std::int64_t offset = -1; offset < length; ++offset) {
              const std::int64_t idx =
                  start_r + offset == -1
                      ? 0
                      : a.ref_to_hyp[static_cast<std::size_t>(start_r + offset)] + 1;
              if (idx == prev_idx) continue;
              prev_idx = idx;
              std::vector<int> shifted =
                  perform_shift(hyp, static_cast<std::size_t>(start_h),
                                static_cast<std::size_t>(length), static_cast<std::size_t>(idx));
              Candidate c{pre_score - distance(shifted).first, length, -start_h, -idx,
                          std::move(shifted)};
              ++checked;
              if (!have_best || c.better_than(best)) {
                best = std::move(c);
                have_best = true;
              }
            }
          }
        }
        if (checked >= kMaxShiftCandidates) break;  // sacreBLEU stops right after this pair
        if (start_h + length == n_hyp || start_r + length == n_ref) break;
      }
    }
  }
  if (!have_best) return {0, hyp};
  return {best.gain, std::move(best.words)};
}

}  // namespace

TerEdits translation_edit_rate(const std::vector<int>& hypothesis,
                               const std::vector<int>& reference) {
  if (reference.empty()) {
    return {static_cast<std::int64_t>(hypothesis.size()), 0};
  }
  BeamEditDistance distance(reference);
  std::int64_t shifts = 0;
  std::vector<int> words = hypothesis;
  int checked = 0;
  while (true) {
    auto [gain, shifted] = best_shift(words, reference, distance, checked);
    if (checked >= kMaxShiftCandidates || gain <= 0) break;
    ++shifts;
    words = std::move(shifted);
  }
  return {shifts + distance(words).first, static_cast<std::int64_t>(reference.size())};
}

}  // namespace nmt::eval
