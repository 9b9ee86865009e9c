#pragma once
// A checkpoint as a CTranslate2 model directory, for serving with CTranslate2 (4.x): model.bin
// (TransformerSpec, revision 7: ct2_model_file.h), config.json, shared_vocabulary.json (the joint
// vocabulary's pieces in id order) and spm.model (the SentencePiece model to tokenize with).
//
// The mapping: CTranslate2 fuses the self-attention q/k/v projections into one linear_0 and the
// cross-attention k/v into linear_1; its norms sit in the sub-layer they wrap (self_attention,
// attention, ffn: our norm1, norm2, norm3) with pre_norm choosing their place as our
// model.norm does; embeddings are scaled by sqrt(d_model) as ours. Positions are written as a
// table (position_encodings/encodings) that CTranslate2 adds as it is, so the numbers are ours:
// its own sinusoids differ (positions from 1, sin and cos halves concatenated, another
// frequency step). Shared matrices are stored once, the others aliased. The source gets EOS
// appended (add_source_eos) and decoding starts from BOS, as nmt-translate does.

#include <cstdint>
#include <string>

#include "preprocess/vocabulary.h"
#include "trainer/export/ct2_model_file.h"
#include "trainer/model/transformer.h"

namespace nmt::exporting {

inline constexpr const char* kCt2SpecName = "TransformerSpec";
inline constexpr std::uint32_t kCt2SpecRevision = 7;

struct Ct2ExportOptions {
  // The SentencePiece model to export ("": the checkpoint's own, else its data folder's;
  // trainer/checkpoint/checkpoint_vocabulary.h).
  std::string spm_model;
  bool force = false;  // replace an existing non-empty output directory
};

struct Ct2ExportSummary {
  std::size_t variables = 0;  // in model.bin, scalars included
  std::uintmax_t model_bytes = 0;
};

// Throws std::invalid_argument naming `source` and the field for a model CTranslate2 cannot
// represent (d_k != d_v).
void check_ctranslate2_exportable(const model::ModelConfig& config, const std::string& source);

// model.bin's variables for `model`; `source` names it in errors.
Ct2ModelFile ctranslate2_variables(model::TransformerImpl& model, const std::string& source);

// config.json for a model of `config` with vocabulary `vocab`.
std::string ctranslate2_config_json(const model::ModelConfig& config,
                                    const preprocess::Vocabulary& vocab);

// Writes the directory `out_dir` for `checkpoint`: into a temporary sibling first, renamed into
// place once complete, so that a failed export leaves no directory that looks like a model.
// Refuses an existing non-empty `out_dir` unless options.force.
Ct2ExportSummary export_ctranslate2(const std::string& checkpoint, const std::string& out_dir,
                                    const Ct2ExportOptions& options);

}  // namespace nmt::exporting
