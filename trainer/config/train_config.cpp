#include "trainer/config/train_config.h"

#include <yaml-cpp/yaml.h>

#include <stdexcept>

#include "common/config_fields.h"
#include "common/config_loader.h"
#include "common/named_choices.h"

namespace nmt {

template <>
struct ConfigEnum<runtime::Precision> {
  static const char* name(runtime::Precision p) { return runtime::precision_name(p); }
  static runtime::Precision parse(const std::string& s) { return runtime::parse_precision(s); }
};
template <>
struct ConfigEnum<DistBackend> {
  static const char* name(DistBackend b) { return dist_backend_name(b); }
  static DistBackend parse(const std::string& s) { return parse_dist_backend(s); }
};
template <>
struct ConfigEnum<model::Positions> {
  static const char* name(model::Positions p) { return model::enum_name(p); }
  static model::Positions parse(const std::string& s) { return model::parse_positions(s); }
};
template <>
struct ConfigEnum<model::NormPlacement> {
  static const char* name(model::NormPlacement n) { return model::enum_name(n); }
  static model::NormPlacement parse(const std::string& s) { return model::parse_norm(s); }
};
template <>
struct ConfigEnum<model::EmbeddingSharing> {
  static const char* name(model::EmbeddingSharing e) { return model::enum_name(e); }
  static model::EmbeddingSharing parse(const std::string& s) {
    return model::parse_embedding_sharing(s);
  }
};

// Every run-config key, declared once: its meaning, the paper's value (PAPER.md) and, through the
// structs' initializers, its default. Loading, to_yaml (hence config.yaml, the config inside each
// checkpoint, the checkpoint's model diff and the tracker's params) and docs/config.md
// (nmt-config-doc) all walk these lists (common/config_fields.h).
template <typename V>
void fields(V& v, model::ModelConfig& m) {
  v("vocab_size", m.vocab_size,
    "Size of the joint source-target vocabulary; nmt-train sets it from the shards' SentencePiece "
    "model.",
    Paper{"~37000 (shared BPE)"});
  v("layers", m.layers, "N: encoder layers, and as many decoder layers.", Paper{"6"});
  v("d_model", m.d_model, "Width of the embeddings and of every sub-layer's output.",
    Paper{"512; big 1024"});
  v("d_ff", m.d_ff, "Inner width of the position-wise feed-forward network.",
    Paper{"2048; big 4096"});
  v("heads", m.heads, "h: attention heads.", Paper{"8; big 16"});
  v("d_k", m.d_k, "Per-head query and key width (Table 3 rows A and B vary it).", Paper{"64"});
  v("d_v", m.d_v, "Per-head value width.", Paper{"64"});
  v("dropout", m.dropout,
    "P_drop: dropout on every sub-layer's output and on the sums of embeddings and positions.",
    Paper{"0.1; big 0.3"});
  v("attention_dropout", m.attention_dropout, "Dropout on the attention weights.",
    Paper{"0 (none)"});
  v("ffn_dropout", m.ffn_dropout, "Dropout after the ReLU inside the feed-forward network.",
    Paper{"0 (none)"});
  v("positions", m.positions,
    "sinusoidal: the paper's fixed encodings; learned: a trained table per stack (Table 3 row E).",
    Paper{"sinusoidal"});
  v("max_positions", m.max_positions,
    "Longest sequence the model takes (BOS/EOS included); the rows of a learned table.");
  v("norm", m.norm,
    "post: LayerNorm(x + Dropout(Sublayer(x))), the paper's; pre: x + Dropout(Sublayer("
    "LayerNorm(x))), with a final norm after each stack.",
    Paper{"post"});
  v("embedding_sharing", m.embedding_sharing,
    "all: the source and target embeddings and the pre-softmax projection share one matrix "
    "(joint vocabulary); decoder: the target embedding and the projection only; none.",
    Paper{"all"});
  v("layer_norm_eps", m.layer_norm_eps, "Added to the variance in every LayerNorm.");
}

template <typename V>
void fields(V& v, DataConfig& d) {
  v("dir", d.dir, "An nmt-preprocess output directory (nmt-train --data sets it).",
    Empty{"none, --data names it"});
  v("train_split", d.train_split, "The split trained on.");
  v("valid_split", d.valid_split, "The split validated on.", Empty{"no validation"});
  v("max_src_tokens", d.max_src_tokens,
    "Source tokens in one batch, padding included; an update takes train.update_batches of them.",
    Paper{"~25000 per update"});
  v("max_tgt_tokens", d.max_tgt_tokens, "Target tokens in one batch, padding included.",
    Paper{"~25000 per update"});
  v("max_length", d.max_length,
    "Pairs longer than this on either side (BOS/EOS included) are skipped.");
  v("bucket_pool", d.bucket_pool,
    "Batches' worth of pairs in one pool (a maxi-batch): shuffled, sorted by length, cut into "
    "batches and the batches shuffled; a rank holds at most two pools, whatever the corpus size.");
  v("verify_checksums", d.verify_checksums,
    "Hash every shard against manifest.json when the run opens the data; nmt-preprocess hashes "
    "them as it writes them, and `nmt-preprocess --verify DIR` re-checks a copied directory.");
}

template <typename V>
void fields(V& v, TrainConfig& t) {
  v("max_steps", t.max_steps, "Parameter updates in the run.", Paper{"100000; big 300000"});
  v("max_minutes", t.max_minutes,
    "Training-time budget over all processes of the run (0: none): the run ends at the first "
    "update past it as it would at max_steps, so a recipe sized for one machine ends in time on "
    "a slower one.");
  v("accumulation", t.accumulation,
    "Batches per update on each rank, to reach the paper's batch on fewer devices; derived from "
    "update_batches when that is set.");
  v("update_batches", t.update_batches,
    "Batches in one update over all ranks, each rank taking update_batches / ranks of them: the "
    "updates and their sample order do not depend on the number of ranks. 0: accumulation x "
    "ranks, fixed when a fresh run starts.");
  v("lr_factor", t.lr_factor,
    "lr = lr_factor * d_model^-0.5 * min(step^-0.5, step * warmup_steps^-1.5).", Paper{"1.0"});
  v("warmup_steps", t.warmup_steps, "Updates over which the rate rises linearly.", Paper{"4000"});
  v("cooldown", t.cooldown,
    "The last fraction of the run (of max_steps, or of max_minutes when that ends it first) over "
    "which the rate falls linearly to 0; 0: the paper's schedule to the end.",
    Paper{"0 (none)"});
  v("adam_beta1", t.adam_beta1, "Adam's beta1.", Paper{"0.9"});
  v("adam_beta2", t.adam_beta2, "Adam's beta2.", Paper{"0.98"});
  v("adam_eps", t.adam_eps, "Adam's epsilon.", Paper{"1e-9"});
  v("label_smoothing", t.label_smoothing,
    "eps_ls: the training target puts 1 - eps_ls on the reference token and spreads eps_ls "
    "uniformly over the vocabulary.",
    Paper{"0.1"});
  v("clip_norm", t.clip_norm, "Gradients are scaled down to this global norm; 0: no clipping.",
    Paper{"0 (none)"});
  v("max_skipped_updates", t.max_skipped_updates,
    "Updates in a row skipped for a non-finite gradient norm before training stops with an "
    "error (fp16: counted once the loss scale is down to 1).");
  v("validate_every", t.validate_every,
    "Updates between validations (loss and perplexity on data.valid_split); 0: none.");
  v("valid_bleu_every", t.valid_bleu_every,
    "Updates between validation BLEU scores (decoding data.valid_split); 0: none.");
  v("valid_bleu_beam", t.valid_bleu_beam,
    "Beam size of the validation decoding; 1: greedy (length penalty: decode.alpha).");
  v("valid_bleu_sentences", t.valid_bleu_sentences,
    "Validation pairs decoded for BLEU, from the first; 0: all.");
  v("early_stopping", t.early_stopping,
    "Stop after this many validations without improvement; 0: never.");
  v("log_every", t.log_every, "Updates between metric lines (log and tracker).");
  v("seed", t.seed, "Seeds the parameters, dropout and the batch order.");
  v("device", t.device, "cpu, cuda, cuda:N, or auto (CUDA when available, else the CPU).");
  v("allow_shared_gpu", t.allow_shared_gpu,
    "Several ranks of one node may drive the same GPU (round-robin when a node has more ranks "
    "than GPUs); false: each rank needs a GPU of its own.");
  v("precision", t.precision,
    "auto: bf16 where the device runs it natively and faster (GPUs of compute capability 8.0+, "
    "CPUs with AMX or AVX512-BF16), else fp32. fp16 (dynamic loss scaling) is CUDA only. "
    "int8 is for decoding on a CPU (nmt-translate, nmt-evaluate), never for training.");
  v("threads", t.threads,
    "CPU threads; 0: every CPU this process may run on (its affinity mask: taskset, mpirun "
    "binding, Slurm's cpus-per-task), not the machine's core count.");
}

template <typename V>
void fields(V& v, CheckpointConfig& c) {
  v("every_steps", c.every_steps, "Updates between checkpoints; 0: only by time and at the end.",
    Paper{"1500; big 600 (10 minutes at its 0.4 and 1.0 s a step)"});
  v("every_minutes", c.every_minutes, "Minutes between checkpoints; 0: not by time.",
    Paper{"10 (configs/base.yaml and big.yaml use the steps instead)"});
  v("keep_last", c.keep_last, "Step checkpoints kept; older ones are deleted.");
}

template <typename V>
void fields(V& v, DecodeConfig& d) {
  v("average_last", d.average_last, "Newest checkpoints averaged into the translating model.",
    Paper{"5; big 20"});
  v("beam", d.beam, "Beam size; 1: greedy.", Paper{"4"});
  v("alpha", d.alpha, "Length penalty: hypotheses are ranked by log P / ((5 + |Y|) / 6)^alpha.",
    Paper{"0.6"});
}

template <typename V>
void fields(V& v, DistConfig& d) {
  v("backend", d.backend,
    "How CUDA gradients travel: auto (NCCL when this LibTorch has it, else CUDA-aware MPI when "
    "the MPI library is, else host staging), mpi (CUDA-aware), mpi-staged (through pinned host "
    "buffers), nccl. CPU gradients always go through MPI.");
  v("bucket_mb", d.bucket_mb, "Megabytes of gradients fused into one all-reduce.");
  v("overlap", d.overlap, "Start each bucket's all-reduce during the backward pass.");
  v("hang_timeout_s", d.hang_timeout_s,
    "Seconds a rank waits on a peer before it aborts the job, naming the peer.");
  v("root_work_timeout_s", d.root_work_timeout_s,
    "The same wait while rank 0 alone saves a checkpoint or decodes.");
}

template <typename V>
void fields(V& v, TrackerConfig& t) {
  v("url", t.url, "http://HOST:PORT or https://HOST:PORT of an nmt-trackerd.",
    Empty{"not given here; NMT_TRACKER_URL may give it"});
  v("port_file", t.port_file, "Or the daemon's --port-file (host 127.0.0.1).",
    Empty{"not given here"});
  v("token_file", t.token_file, "File holding the bearer token, when the daemon requires one.",
    Empty{"not given here; NMT_TRACKER_TOKEN_FILE may give it"});
  v("ca_file", t.ca_file, "https: PEM file of the CAs that sign the daemon's certificate.",
    Empty{"not given here; NMT_TRACKER_CA_FILE, else the system's CAs"});
  v("experiment", t.experiment, "The experiment the run is filed under.");
  v("run_name", t.run_name, "The run's name.", Empty{"the run directory's name"});
  v("sweep", t.sweep, "The sweep the run is a row of (set by nmt-sweep).",
    Empty{"not a sweep's row"});
  v("row_label", t.row_label, "The run's row label in its sweep's table (set by nmt-sweep).",
    Empty{"none"});
  v("row_index", t.row_index, "The run's row in its sweep (set by nmt-sweep); -1: none.");
  v("ref_ppl", t.ref_ppl,
    "The row's reference perplexity, for comparison in the sweep's table; 0: none.");
  v("ref_bleu", t.ref_bleu, "The row's reference BLEU; 0: none.");
  v("ref_params", t.ref_params, "The row's reference parameter count; 0: none.");
  v("heartbeat_s", t.heartbeat_s,
    "Seconds between the heartbeats rank 0 sends the daemon while the run lives, from a thread "
    "of its own (through checkpoints and validation too); the daemon marks an attempt silent for "
    "longer than its --crashed-after crashed. 0: none.");
}

template <typename V>
void fields(V& v, RunConfig& c) {
  v.section("model", c.model,
            "The Transformer's hyper-parameters (paper section 3, Table 3); the defaults are the "
            "base model.");
  v.section("data", c.data, "The shards trained and validated on, and how they are batched.");
  v.section("train", c.train, "The training recipe (paper section 5) and what it runs on.");
  v.section("checkpoint", c.checkpoint, "When rank 0 writes checkpoints, and how many it keeps.");
  v.section("decode", c.decode,
            "How the trained run translates, chosen on validation data like the rest of the "
            "recipe. nmt-average --run-dir, nmt-translate and nmt-evaluate take these from the "
            "run's config.yaml or the checkpoint unless told otherwise.");
  v.section("dist", c.dist,
            "Data parallelism over MPI ranks (mpirun, srun); a single process ignores it.");
  v.section("tracker", c.tracker,
            "Where the run is tracked and how it is labelled there. A tool's --tracker-* flags "
            "beat url, port_file, token_file and ca_file, which beat the environment "
            "(NMT_TRACKER_URL, NMT_TRACKER_TOKEN_FILE, NMT_TRACKER_CA_FILE); none of them naming "
            "a daemon: no tracking.");
}

namespace {

void require(bool ok, const std::string& field, const std::string& what) {
  if (!ok) throw std::invalid_argument(field + ": " + what);
}

RunConfig load_root(const YAML::Node& root, const std::string& source) {
  RunConfig config;
  read_fields(root, source, config);
  return config;
}

constexpr NamedChoices<DistBackend, 4> kDistBackends{{{{DistBackend::kAuto, "auto"},
                                                       {DistBackend::kMpi, "mpi"},
                                                       {DistBackend::kMpiStaged, "mpi-staged"},
                                                       {DistBackend::kNccl, "nccl"}}}};

}  // namespace

DistBackend parse_dist_backend(const std::string& name) {
  return kDistBackends.parse(name, "backend");
}

const char* dist_backend_name(DistBackend backend) {
  return kDistBackends.name(backend);
}

void DataConfig::validate() const {
  require(max_src_tokens > 0 && max_tgt_tokens > 0, "data.max_src_tokens",
          "token budgets must be positive");
  require(max_length >= 3, "data.max_length", "must be at least 3 (BOS/EOS and one token)");
  require(bucket_pool >= 1, "data.bucket_pool", "must be positive");
  require(!train_split.empty(), "data.train_split", "must name a split");
}

void TrainConfig::validate() const {
  require(max_steps >= 1, "train.max_steps", "must be positive");
  require(accumulation >= 1, "train.accumulation", "must be positive");
  require(update_batches >= 0, "train.update_batches", "must be >= 0 (0: accumulation x ranks)");
  require(max_minutes >= 0, "train.max_minutes", "must be >= 0 (0: no time budget)");
  require(lr_factor > 0, "train.lr_factor", "must be positive");
  require(warmup_steps >= 1, "train.warmup_steps", "must be positive");
  require(cooldown >= 0 && cooldown <= 1, "train.cooldown",
          "must be in [0, 1] (the fraction of the run that ends the rate linearly at 0; 0: none)");
  require(adam_beta1 >= 0 && adam_beta1 < 1 && adam_beta2 >= 0 && adam_beta2 < 1,
          "train.adam_beta1", "betas must be in [0, 1)");
  require(adam_eps > 0, "train.adam_eps", "must be positive");
  require(label_smoothing >= 0 && label_smoothing < 1, "train.label_smoothing",
          "must be in [0, 1)");
  require(clip_norm >= 0, "train.clip_norm", "must be >= 0");
  require(max_skipped_updates >= 1, "train.max_skipped_updates", "must be >= 1");
  require(valid_bleu_every >= 0 && valid_bleu_beam >= 1 && valid_bleu_sentences >= 0,
          "train.valid_bleu_every",
          "valid_bleu_every, valid_bleu_sentences >= 0, valid_bleu_beam >= 1");
  require(validate_every >= 0 && early_stopping >= 0 && log_every >= 1, "train.validate_every",
          "validate_every and early_stopping must be >= 0, log_every >= 1");
  require(threads >= 0, "train.threads", "must be >= 0");
  require(precision != runtime::Precision::kInt8, "train.precision",
          "int8 is for decoding only (nmt-translate and nmt-evaluate --precision int8); train with "
          "auto, fp32, bf16 or fp16 (nmt-train --precision)");
}

void CheckpointConfig::validate() const {
  require(every_steps >= 0 && every_minutes >= 0, "checkpoint.every_steps", "must be >= 0");
  require(keep_last >= 1, "checkpoint.keep_last", "must keep at least one checkpoint");
}

void DecodeConfig::validate() const {
  require(average_last >= 1, "decode.average_last", "must average at least one checkpoint");
  require(beam >= 1, "decode.beam", "must be at least 1");
  require(alpha >= 0, "decode.alpha", "must be >= 0");
}

void DistConfig::validate() const {
  require(bucket_mb > 0, "dist.bucket_mb", "must be positive");
  require(hang_timeout_s > 0 && root_work_timeout_s >= hang_timeout_s, "dist.hang_timeout_s",
          "must be positive and at most dist.root_work_timeout_s");
}

void TrackerConfig::validate() const {
  require(heartbeat_s >= 0, "tracker.heartbeat_s", "must be >= 0 (0: no heartbeats)");
}

void RunConfig::validate() const {
  model.validate();
  data.validate();
  train.validate();
  checkpoint.validate();
  decode.validate();
  dist.validate();
  tracker.validate();
}

RunConfig load_run_config(const std::string& path, const std::vector<std::string>& overrides) {
  YAML::Node root = path.empty() ? YAML::Node(YAML::NodeType::Map) : load_yaml_file(path);
  for (const auto& o : overrides) apply_override(root, o);
  return load_root(root, path.empty() ? "--set" : path);
}

RunConfig parse_run_config(const std::string& yaml, const std::string& source) {
  try {
    return load_root(YAML::Load(yaml), source);
  } catch (const YAML::Exception& e) {
    throw ConfigError(source + ": cannot parse the stored config: " + e.msg);
  }
}

std::string to_yaml(const model::ModelConfig& m) {
  return write_fields(m);
}

std::string to_yaml(const RunConfig& c) {
  return write_fields(c) + "\n";
}

ConfigReference run_config_reference() {
  return {"nmt-train",
          "The run config: `nmt-train --config FILE`, each key overridable with `--set "
          "section.key=value`. configs/base.yaml and configs/big.yaml are the paper's recipes. "
          "The resolved config is written to the run directory (config.yaml) and into every "
          "checkpoint.",
          document_fields(RunConfig{})};
}

}  // namespace nmt
