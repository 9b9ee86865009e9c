// nmt-bleu: sacreBLEU 2.x's command line over nmt_eval (eval/metrics/sacrebleu_cli.h says what it
// emulates and where it deliberately differs): BLEU, chrF/chrF++ and TER, corpus or sentence
// level, with bootstrap intervals and paired tests.

#include <fmt/format.h>

#include <iostream>
#include <string>
#include <vector>

#include "apps/tool_main.h"
#include "common/cli.h"
#include "eval/metrics/sacrebleu_cli.h"
#include "eval/metrics/signature.h"

int main(int argc, char** argv) {
  CLI::App app{
      "BLEU, chrF/chrF++ and TER with sacreBLEU 2.x's command line, algorithms and "
      "output: nmt-bleu REF [REF...] -i HYP [HYP...] (stdin without -i).",
      "nmt-bleu"};
  nmt::eval::SacreBleuArgs args;
  auto log = nmt::apps::tool_log(app);
  nmt::eval::add_sacrebleu_options(app, args);
  app.add_flag_callback(
      "-q,--quiet", [&log] { log.level = "error"; }, "Suppress warnings");
  app.set_version_flag("-V,--version", fmt::format("nmt-bleu (sacreBLEU {} algorithms)",
                                                   nmt::eval::kSacreBleuVersion));
  nmt::add_logging_flags(app, log);
  std::vector<std::string> rewritten;
  try {
    rewritten = nmt::eval::argparse_rewrite(std::vector<std::string>(argv, argv + argc), app);
  } catch (const nmt::UsageError& e) {
    std::cerr << "nmt-bleu: " << e.what() << "\n";
    return nmt::kExitUsage;
  }
  std::vector<char*> rewritten_argv;
  for (auto& arg : rewritten) rewritten_argv.push_back(arg.data());
  return nmt::run_tool(app, log, static_cast<int>(rewritten_argv.size()), rewritten_argv.data(),
                       [&] { return nmt::eval::run_sacrebleu(args, std::cin, std::cout); });
}
