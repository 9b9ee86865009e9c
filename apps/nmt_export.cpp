// nmt-export: a checkpoint in another toolkit's format, for serving outside this project. One
// format: CTranslate2 (a model directory its Translator loads; trainer/export/ctranslate2_export.h
// has the mapping). docs/tools/nmt-export.md shows how to serve it.

#include <fmt/format.h>

#include "apps/tool_main.h"
#include "common/cli.h"
#include "trainer/export/ctranslate2_export.h"

int main(int argc, char** argv) {
  CLI::App app{
      "Export a checkpoint for another toolkit: nmt-export --format ctranslate2 "
      "CHECKPOINT OUT_DIR writes a CTranslate2 model directory.",
      "nmt-export"};
  std::string format, checkpoint, out_dir;
  nmt::exporting::Ct2ExportOptions options;
  app.add_option("--format", format, "Output format: ctranslate2")
      ->required()
      ->check(CLI::IsMember({"ctranslate2"}));
  app.add_option("checkpoint", checkpoint, "Checkpoint (HDF5) to export, e.g. averaged.h5")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("out_dir", out_dir, "Directory to write (created; must be absent or empty)")
      ->required();
  app.add_option("--spm-model", options.spm_model,
                 "SentencePiece model, for a checkpoint that carries none (older files)")
      ->check(CLI::ExistingFile);
  app.add_flag("--force", options.force, "Replace OUT_DIR when it exists and is not empty");
  return nmt::apps::run_main(app, argc, argv, [&] {
    const auto summary = nmt::exporting::export_ctranslate2(checkpoint, out_dir, options);
    spdlog::info(
        "wrote {} ({} variables, model.bin {:.1f} MB): load it with "
        "ctranslate2.Translator(\"{}\")",
        out_dir, summary.variables, static_cast<double>(summary.model_bytes) / 1e6, out_dir);
    return 0;
  });
}
