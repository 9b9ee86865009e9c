// Sweep specs: every shipped spec loads (each row resolved and checked), the Table 3 specs with
// every row of the paper in order, the quick config is the fp32 sweep's chosen row; unknown keys
// (in the spec or a row's overrides), rows that change nothing and a second base row are errors
// naming the file and row; the Slurm array script has one index per row and one rank per GPU; the
// local queue's signal relay passes stops on as each stage needs them.

#include "sweep/sweep_spec.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "common/config_loader.h"
#include "sweep/row_runner.h"
#include "sweep/signal_relay.h"
#include "sweep/slurm_array.h"
#include "test_utils.h"

namespace nmt::sweep {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::write_text;

std::vector<std::string> labels(const SweepSpec& spec) {
  std::vector<std::string> out;
  for (const auto& r : spec.rows) out.push_back(r.label);
  return out;
}

// The rows of configs/sweeps/multi30k-quick-fp32.yaml and then of multi30k-quick-bf16.yaml that
// configs/multi30k-quick.yaml took.
constexpr const char* kChosenQuickFp32Row = "dropout0-ff512";
constexpr const char* kChosenQuickBf16Row = "steps960";

const std::vector<std::string> kTable3Labels = {"base", "A", "A", "A", "A", "B",  "B",
                                                "C",    "C", "C", "C", "C", "C",  "C",
                                                "D",    "D", "D", "D", "E", "big"};

TEST(SweepSpec, ShippedTable3HasEveryRowWithThePapersFigures) {
  const auto spec = load_sweep_spec(std::string(NMT_SOURCE_DIR) + "/configs/sweeps/table3.yaml");
  EXPECT_EQ(spec.name, "table3");
  EXPECT_EQ(labels(spec), kTable3Labels);
  EXPECT_DOUBLE_EQ(spec.rows[0].reference.ppl, 4.92);
  EXPECT_EQ(spec.rows[0].config.model.expected_parameter_count(), 63082496);  // 37k vocabulary
  EXPECT_EQ(spec.rows[1].config.model.heads, 1);
  EXPECT_EQ(spec.rows[1].config.model.d_k, 512);
  EXPECT_EQ(spec.rows[5].config.model.expected_parameter_count(), 55990784);    // B, d_k 16
  EXPECT_EQ(spec.rows[7].config.model.expected_parameter_count(), 33656832);    // C, N 2
  EXPECT_EQ(spec.rows[10].config.model.expected_parameter_count(), 26834944);   // C, d_model 256
  EXPECT_EQ(spec.rows[11].config.model.expected_parameter_count(), 163889152);  // C, 1024
  EXPECT_EQ(spec.rows[18].config.model.positions, model::Positions::kLearned);
  EXPECT_EQ(spec.rows[19].config.model.expected_parameter_count(), 214245376);  // big
  EXPECT_EQ(spec.rows[19].config.train.max_steps, 300000);
  EXPECT_DOUBLE_EQ(spec.rows[19].reference.bleu, 26.4);
}

TEST(SweepSpec, ShippedMulti30kSiblingKeepsTheStructure) {
  const auto spec =
      load_sweep_spec(std::string(NMT_SOURCE_DIR) + "/configs/sweeps/table3-multi30k.yaml");
  EXPECT_EQ(labels(spec), kTable3Labels);
  EXPECT_EQ(spec.rows[0].config.model.d_model, 128);
  EXPECT_EQ(spec.rows[19].config.model.d_model, 256);
}

TEST(SweepSpec, EveryShippedSpecLoadsWithItsRowsChecked) {
  // load_sweep_spec resolves and validates every row's config: a shipped spec whose base config
  // moved under it (a row that no longer changes anything, a key renamed) fails here, not in a
  // sweep an hour in.
  std::vector<std::string> names;
  for (const auto& entry :
       fs::directory_iterator(std::string(NMT_SOURCE_DIR) + "/configs/sweeps")) {
    if (entry.path().extension() != ".yaml") continue;
    SCOPED_TRACE(entry.path().string());
    const auto spec = load_sweep_spec(entry.path().string());
    EXPECT_FALSE(spec.rows.empty());
    names.push_back(spec.name);
  }
  EXPECT_NE(std::find(names.begin(), names.end(), "multi30k-quick-fp32"), names.end());
}

const Row& row_labelled(const SweepSpec& spec, const std::string& label) {
  const auto row = std::find_if(spec.rows.begin(), spec.rows.end(),
                                [&](const Row& r) { return r.label == label; });
  if (row == spec.rows.end()) throw std::runtime_error(spec.name + ": no row " + label);
  return *row;
}

TEST(SweepSpec, QuickConfigIsTheChosenRowsOfTheFp32AndBf16SweepsAndTheirFirstRowsWhatCameBefore) {
  // Each search pins the config it started from, so that its rows keep what they measured after
  // configs/multi30k-quick.yaml takes one of them: the fp32 search chose the model and the batch,
  // the bf16 search then the number of updates.
  const std::string dir = std::string(NMT_SOURCE_DIR) + "/configs/";
  const auto fp32 = load_sweep_spec(dir + "sweeps/multi30k-quick-fp32.yaml");
  const auto bf16 = load_sweep_spec(dir + "sweeps/multi30k-quick-bf16.yaml");
  const auto quick = load_run_config(dir + "multi30k-quick.yaml");
  ASSERT_GE(fp32.rows.size(), 5u);
  const auto& previous = fp32.rows[0].config;  // the config the fp32 sweep started from
  EXPECT_EQ(fp32.rows[0].label, "quick");
  EXPECT_DOUBLE_EQ(previous.model.dropout, 0.1);
  EXPECT_EQ(previous.model.d_ff, 1024);
  EXPECT_EQ(previous.train.max_steps, 640);
  const auto& chosen_fp32 = row_labelled(fp32, kChosenQuickFp32Row).config;
  EXPECT_DOUBLE_EQ(chosen_fp32.model.dropout, quick.model.dropout);
  EXPECT_EQ(chosen_fp32.model.d_ff, quick.model.d_ff);
  EXPECT_EQ(chosen_fp32.data.max_src_tokens, quick.data.max_src_tokens);
  EXPECT_DOUBLE_EQ(chosen_fp32.train.max_minutes, quick.train.max_minutes);
  EXPECT_EQ(chosen_fp32.checkpoint.every_steps, quick.checkpoint.every_steps);

  ASSERT_GE(bf16.rows.size(), 2u);
  EXPECT_EQ(bf16.rows[0].label, "quick");  // the fp32 sweep's choice, as the bf16 sweep found it
  EXPECT_EQ(bf16.rows[0].config.train.max_steps, chosen_fp32.train.max_steps);
  EXPECT_EQ(bf16.rows[0].config.model.d_ff, quick.model.d_ff);
  const auto& chosen_bf16 = row_labelled(bf16, kChosenQuickBf16Row).config;
  EXPECT_EQ(chosen_bf16.train.max_steps, quick.train.max_steps);
  EXPECT_NE(chosen_bf16.train.max_steps, chosen_fp32.train.max_steps);
  EXPECT_EQ(chosen_bf16.train.warmup_steps, quick.train.warmup_steps);
  EXPECT_DOUBLE_EQ(chosen_bf16.train.max_minutes, quick.train.max_minutes);
}

struct SpecFiles {
  TempDir dir;
  std::string write(const std::string& rows) {
    write_text(dir.file("base.yaml"),
               "model: {layers: 2, d_model: 64, d_ff: 128, heads: 4, d_k: 16, d_v: 16}\n");
    const std::string path = dir.file("spec.yaml");
    write_text(path, "name: micro\nbase: base.yaml\nrows:\n" + rows);
    return path;
  }
};

TEST(SweepSpec, ResolvesRowsAndListsThemInOrder) {
  SpecFiles f;
  const auto spec =
      load_sweep_spec(f.write("  - label: base\n"
                              "  - {label: C, set: [model.layers=4]}\n"));
  ASSERT_EQ(spec.rows.size(), 2u);
  EXPECT_EQ(spec.experiment, "micro");
  EXPECT_EQ(spec.rows[1].config.model.layers, 4);
  EXPECT_EQ(spec.rows[1].config.model.d_model, 64);
  EXPECT_EQ(row_slug(spec, 1), "01-C");
  RunnerOptions options;
  options.sweep_dir = f.dir.file("sweep");
  options.tools_dir = "/opt/nmt/bin";
  const auto plans = plan_rows(spec, options);
  EXPECT_EQ(plans[1].run_name, "micro-01-C");
  EXPECT_EQ(plans[1].state(), RowState::kPending);
  const auto& train = plans[1].commands[0];
  EXPECT_EQ(train.front(), "/opt/nmt/bin/nmt-train");
  EXPECT_NE(std::find(train.begin(), train.end(), "model.layers=4"), train.end());
  EXPECT_NE(std::find(train.begin(), train.end(), "--resume"), train.end());
  // Every row is scored with the spec's beam and length penalty, whatever its config's decode.
  const auto& evaluate = plans[1].commands.back();
  EXPECT_EQ(evaluate.front(), "/opt/nmt/bin/nmt-evaluate");
  const auto alpha = std::find(evaluate.begin(), evaluate.end(), "--alpha");
  ASSERT_NE(alpha, evaluate.end());
  EXPECT_EQ(*std::next(alpha), "0.6");
}

TEST(SweepSpec, RejectsUnknownKeysNoOpRowsAndTwoBaseRows) {
  SpecFiles f;
  NMT_EXPECT_THROW_WITH(load_sweep_spec(f.write("  - {label: A, set: [model.hedas=2]}\n")),
                        ConfigError, "spec.yaml", "row 0 (A)", "model.hedas");
  NMT_EXPECT_THROW_WITH(load_sweep_spec(f.write("  - {label: A, set: [model.heads=4]}\n")),
                        ConfigError, "row 0 (A)", "change nothing");
  NMT_EXPECT_THROW_WITH(load_sweep_spec(f.write("  - {label: base}\n  - {label: again}\n")),
                        ConfigError, "row 1 (again)", "second row without overrides");
  NMT_EXPECT_THROW_WITH(load_sweep_spec(f.write("  - {label: A, sett: [model.heads=2]}\n")),
                        ConfigError, "sett");
}

// A row's overrides are --set flags: `key=` is the empty string, a value only for keys that take
// one; null is refused, in the spec and in the base config, naming where it stands.
TEST(SweepSpec, EmptyAndNullValuesAreRefusedWhereTheKeyTakesNone) {
  SpecFiles f;
  NMT_EXPECT_THROW_WITH(load_sweep_spec(f.write("  - {label: A, set: [model.layers=]}\n")),
                        ConfigError, "spec.yaml: row 0 (A)",
                        "--set model.layers=: empty value; expected an integer");
  for (const char* null : {"~", "null"}) {
    NMT_EXPECT_THROW_WITH(
        load_sweep_spec(f.write(std::string("  - {label: A, set: [model.layers=") + null + "]}\n")),
        ConfigError, std::string("spec.yaml: row 0 (A)"),
        std::string("--set model.layers=") + null);
  }
  const auto spec = load_sweep_spec(
      f.write("  - label: base\n  - {label: no-valid, set: [data.valid_split=]}\n"));
  EXPECT_EQ(spec.rows[1].config.data.valid_split, "");
  NMT_EXPECT_THROW_WITH(load_sweep_spec(f.write("  - label:\n")), ConfigError,
                        "spec.yaml:4:5: rows[0].label: no value (YAML null)");
  NMT_EXPECT_THROW_WITH(load_sweep_spec(f.write("  - {label: A, set: }\n")), ConfigError,
                        "spec.yaml:4:", "rows[0].set: no value (YAML null)", "[] for none");
  const std::string path = f.write("  - label: base\n");
  write_text(f.dir.file("base.yaml"), "model:\n  layers: ~\n");
  NMT_EXPECT_THROW_WITH(load_sweep_spec(path), ConfigError, "base.yaml:2:3: model.layers",
                        "no value (YAML null)");
}

TEST(SweepSpec, OneYamlDocumentPerSpec) {
  SpecFiles f;
  const std::string path = f.write("  - label: base\n");
  write_text(path, "name: micro\nbase: base.yaml\nrows:\n  - label: base\n---\nname: other\n");
  NMT_EXPECT_THROW_WITH(load_sweep_spec(path), ConfigError,
                        "spec.yaml:5:1: a second YAML document");
  write_text(path, "---\nname: micro\nbase: base.yaml\nrows:\n  - label: base\n");
  EXPECT_EQ(load_sweep_spec(path).name, "micro");
}

TEST(SlurmArray, OneIndexPerRowEachResumingItsRow) {
  SpecFiles f;
  const auto spec =
      load_sweep_spec(f.write("  - label: base\n"
                              "  - {label: C, set: [model.layers=4]}\n"
                              "  - {label: D, set: [model.dropout=0.3]}\n"));
  SlurmOptions options;
  options.nmt_sweep = "/opt/nmt/bin/nmt-sweep";
  options.spec_path = "/specs/micro.yaml";
  options.sweep_dir = "/runs/micro";
  options.max_parallel = 2;
  const auto script = slurm_array_script(spec, options);
  EXPECT_NE(script.find("#SBATCH --array=0-2%2"), std::string::npos) << script;
  EXPECT_NE(script.find("#SBATCH --requeue"), std::string::npos);
  EXPECT_NE(script.find("#SBATCH --open-mode=append"), std::string::npos);
  EXPECT_NE(script.find("--row \"$SLURM_ARRAY_TASK_ID\""), std::string::npos);
  EXPECT_NE(script.find("scontrol requeue \"$SLURM_JOB_ID\""), std::string::npos);
  EXPECT_EQ(script.find("--gpus-per-task"), std::string::npos) << "no GPU asked for";
}

// A row of G GPUs is G ranks of one GPU each, started by srun with PMIx and the CPUs per rank
// (srun does not inherit --cpus-per-task since Slurm 22.05); the row evaluates on its device.
TEST(SlurmArray, OneRankPerGpuThroughSrun) {
  SpecFiles f;
  const auto spec =
      load_sweep_spec(f.write("  - label: base\n  - {label: C, set: [model.layers=4]}\n"));
  SlurmOptions options;
  options.nmt_sweep = "/opt/nmt/bin/nmt-sweep";
  options.spec_path = "/specs/micro.yaml";
  options.sweep_dir = "/runs/micro";
  options.ranks_per_row = 8;
  options.gpu_per_rank = true;
  options.cpus_per_rank = 6;
  options.device = "cuda";
  const auto script = slurm_array_script(spec, options);
  EXPECT_NE(script.find("#SBATCH --ntasks=8\n"), std::string::npos) << script;
  EXPECT_NE(script.find("#SBATCH --gpus-per-task=1\n"), std::string::npos);
  EXPECT_NE(script.find("#SBATCH --cpus-per-task=6\n"), std::string::npos);
  EXPECT_NE(script.find("--launcher 'srun --mpi=pmix --kill-on-bad-exit=1 --ntasks=8 "
                        "--cpus-per-task=6' --threads 6 --device 'cuda'"),
            std::string::npos);
  // USR1 (the time-limit notice) is passed on; Slurm's SIGTERM reaches the ranks by itself.
  EXPECT_NE(script.find("trap 'signal=USR1; [[ -n \"$pid\" ]] && kill -s USR1 \"$pid\""),
            std::string::npos);
  EXPECT_NE(script.find("trap 'signal=TERM' TERM"), std::string::npos);
  options.ranks_per_row = 0;
  EXPECT_THROW(slurm_array_script(spec, options), std::invalid_argument);
}

// The local queue's signal relay: a launcher (mpirun, srun) gets USR1 for TERM; a plain stage the
// signal itself; under Slurm a TERM is not relayed (Slurm signals the ranks itself).
int relay_once(int signo, bool launcher, bool forward_term) {
  const pid_t child = fork();
  if (child == 0) {
    pause();
    _exit(0);
  }
  SignalRelay relay(forward_term);
  raise(signo);
  relay.relay({{child, launcher}});
  EXPECT_EQ(relay.stop_signal(), signo);
  EXPECT_EQ(relay.exit_code(), signo == SIGINT ? 130 : 75);
  if (!forward_term) {
    usleep(100000);
    kill(child, SIGKILL);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFSIGNALED(status) ? WTERMSIG(status) : -1;
}

TEST(SignalRelay, PassesStopsOnAsTheStageNeedsThem) {
  EXPECT_EQ(relay_once(SIGTERM, true, true), SIGUSR1);
  EXPECT_EQ(relay_once(SIGINT, true, true), SIGUSR2);
  EXPECT_EQ(relay_once(SIGTERM, false, true), SIGTERM);
  EXPECT_EQ(relay_once(SIGUSR1, false, true), SIGUSR1);
  EXPECT_EQ(relay_once(SIGTERM, true, false), SIGKILL) << "under Slurm, TERM is not relayed";
}

}  // namespace
}  // namespace nmt::sweep
