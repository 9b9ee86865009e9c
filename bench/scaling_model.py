#!/usr/bin/env python3
"""Cost model of data-parallel Transformer training on N GPUs (docs/scaling.md).

Weak scaling: every GPU computes a batch of the same size (the paper's 25k tokens over 8 GPUs,
3125 source + 3125 target tokens each), so the update grows with N; then the gradients are summed by
a ring all-reduce, which moves 2(N-1)/N of the gradient bytes through every GPU's link:
    t_compute = step FLOPs per GPU / (peak x MFU)
    t_comm    = 2(N-1)/N x gradient bytes / bus bandwidth + 2(N-1) x latency
    exposed   = t_comm                                    (no overlap)
              = max(t_comm - h x t_backward, t_bucket)    (overlap: bucket all-reduces run during
                                                           the backward pass; the last bucket
                                                           cannot hide)
    efficiency = t_compute / (t_compute + exposed)
FLOPs: 6 per parameter per token the parameter touches (2 forward, 4 backward), with the encoder's
weights touching source tokens and the decoder's weights plus the output projection touching
target tokens; attention scores and element-wise work are left out (sentences are short).
Inputs measured on this project's machine are passed on the command line (see docs/scaling.md).
`scaling_model.py check --ranks N --step-s S --params P --gbit G --overlap true|false` prints the
predicted speed-up of N one-thread ranks over one for a measured step time and link bandwidth
(bench/dist_scaling.sh --nodes 2 prints it beside the measurement).
`scaling_model.py wmt14` prints predicted wall times of the paper's WMT14 runs (configs/base.yaml,
configs/big.yaml) on 8 and 64 H100s with trainer/model/flops.cpp's FLOPs count, a table in Markdown
(docs/wmt14.md): a prediction from assumed MFU and bandwidths, not a measurement.
"""
import argparse

MODELS = {  # layers, d_model, d_ff, parameters (nmt-train --count-params, vocabulary 37000)
    "base": (6, 512, 2048, 63_082_496),
    "big": (6, 1024, 4096, 214_245_376),
}


def step_flops(layers, d, d_ff, vocab, src_tokens, tgt_tokens):
    encoder = layers * (4 * d * d + 2 * d * d_ff)
    decoder = layers * (8 * d * d + 2 * d * d_ff) + d * vocab
    return 6.0 * (encoder * src_tokens + decoder * tgt_tokens)


def exposed_comm(t_compute, params, grad_bytes, ranks, bw, latency_s, bucket_bytes, hidden,
                 overlap):
    """Seconds of all-reduce a step cannot hide: the ring's bytes over the link, plus latency."""
    if ranks <= 1:
        return 0.0, 0.0
    ring = 2.0 * (ranks - 1) / ranks
    t_comm = ring * params * grad_bytes / bw + 2 * (ranks - 1) * latency_s
    if not overlap:
        return t_comm, t_comm
    t_bucket = ring * min(bucket_bytes, params * grad_bytes) / bw
    return t_comm, max(t_comm - hidden * t_compute * 2.0 / 3.0, t_bucket)


def check(argv):
    """Prediction for a measured layout: ranks of one thread, weak scaling, one link each."""
    p = argparse.ArgumentParser(prog="scaling_model.py check")
    p.add_argument("--ranks", type=int, required=True)
    p.add_argument("--step-s", type=float, required=True,
                   help="one rank's measured seconds per update on its own (the compute)")
    p.add_argument("--params", type=int, required=True)
    p.add_argument("--gbit", type=float, required=True, help="each rank's link, Gbit/s")
    p.add_argument("--latency-us", type=float, default=50.0)
    p.add_argument("--bucket-mb", type=float, default=25.0)
    p.add_argument("--hidden", type=float, default=0.9)
    p.add_argument("--overlap", choices=["true", "false"], required=True)
    a = p.parse_args(argv)
    _, exposed = exposed_comm(a.step_s, a.params, 4, a.ranks, a.gbit * 1e9 / 8,
                              a.latency_us * 1e-6, a.bucket_mb * 2**20, a.hidden,
                              a.overlap == "true")
    # Printed: the speed-up over one rank (ideal: the number of ranks).
    print(f"{a.ranks * a.step_s / (a.step_s + exposed):.2f}")


# --- wmt14: predicted wall times of the paper's WMT14 recipes (docs/wmt14.md) --------------------

# The paper's runs on 8 P100s (section 5.2, /work/shared/PAPER.md): seconds per step and what it
# reports as the total; Table 2's training FLOPs are GPUs x time x 9.5 TFLOP/s (its P100 figure).
PAPER_P100 = {"base": (0.4, "12 h"), "big": (1.0, "3.5 days")}
P100_TFLOPS = 9.5
# A reference throughput: NVIDIA's fairseq fork (github.com/NVIDIA/DeepLearningExamples,
# PyTorch/Translation/Transformer/README.md), Transformer big (transformer_wmt_en_de_big_t2t,
# 33,708 + 4 special tokens shared), 8 x V100 16 GB, mixed precision, --max-tokens 5120 per GPU:
# 235,077 tokens/s, read here as target tokens (fairseq's words/s); V100 fp16 tensor peak 125.
DLE_V100_BIG = {"gpus": 8, "tokens_per_gpu": 5120, "tokens_per_s": 235_077, "vocab": 33_712,
                "peak_tflops": 125.0}


def load_config(path):
    """configs/*.yaml: sections of scalars (PyYAML when installed, else this minimal reader)."""
    try:
        import yaml
        with open(path) as f:
            return yaml.safe_load(f)
    except ImportError:
        pass
    config, section = {}, None
    with open(path) as f:
        for raw in f:
            line = raw.split(" #")[0].rstrip() if not raw.lstrip().startswith("#") else ""
            if not line.strip():
                continue
            key, _, value = line.strip().partition(":")
            if not raw[0].isspace():
                section = config.setdefault(key, {}) if not value.strip() else None
                if section is None:
                    config[key] = value.strip()
                continue
            value = value.strip()
            for cast in (int, float):
                try:
                    value = cast(value)
                    break
                except ValueError:
                    pass
            section[key] = value
    return config


def parameter_count(m):
    """ModelConfig::expected_parameter_count (trainer/config/model_config.cpp)."""
    d, qk, v, ff = m["d_model"], m["heads"] * m["d_k"], m["heads"] * m["d_v"], m["d_ff"]
    attention = 2 * (d * qk + qk) + (d * v + v) + (v * d + d)
    ffn = (d * ff + ff) + (ff * d + d)
    norm = 2 * d
    matrices = {"all": 1, "decoder": 2}.get(m.get("embedding_sharing", "all"), 3)
    total = m["layers"] * ((attention + ffn + 2 * norm) + (2 * attention + ffn + 3 * norm))
    total += matrices * m["vocab_size"] * d
    if m.get("positions", "sinusoidal") == "learned":
        total += 2 * m.get("max_positions", 1024) * d
    if m.get("norm", "post") == "pre":
        total += 2 * norm
    return total


def training_flops(m, batch, src_len, tgt_len):
    """nmt::model::training_flops (trainer/model/flops.cpp): 3 x forward, multiply-add = 2,
    projections, attention scores and weighted values, FFN and output projection; padded positions
    counted, element-wise work not."""
    d, qk, v, ff = m["d_model"], m["heads"] * m["d_k"], m["heads"] * m["d_v"], m["d_ff"]
    s, t = float(src_len), float(tgt_len)

    def attention(queries, keys):
        return (2.0 * queries * (d * qk + v * d) + 2.0 * keys * (d * qk + d * v)
                + 2.0 * queries * keys * (qk + v))

    def ffn(positions):
        return 2.0 * positions * 2.0 * d * ff

    encoder = m["layers"] * (attention(s, s) + ffn(s))
    decoder = m["layers"] * (attention(t, t) + attention(t, s) + ffn(t))
    projection = 2.0 * t * d * m["vocab_size"]
    return 3.0 * batch * (encoder + decoder + projection)


def micro_batch_flops(m, tokens, length):
    """A micro-batch filled to `tokens` padded positions a side, sentences padded to `length`."""
    return training_flops(m, tokens / length, length, length)


def wall(hours):
    minutes = 60 * hours
    return f"{minutes:.1f} min" if minutes < 10 else f"{minutes:.0f} min" if hours < 1 \
        else f"{hours:.1f} h"


def wmt14(argv):
    """Predicted wall time of configs/base.yaml and configs/big.yaml on 8 and 64 H100s."""
    import os
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p = argparse.ArgumentParser(
        prog="scaling_model.py wmt14",
        description="Predicted training wall time of the paper's WMT14 base and big recipes on "
                    "H100s, from trainer/model/flops.cpp's FLOPs count, assumed MFU and the ring "
                    "all-reduce model (a prediction, not a measurement). Prints Markdown.")
    p.add_argument("--configs", default=os.path.join(root, "configs/base.yaml") + "," +
                   os.path.join(root, "configs/big.yaml"))
    p.add_argument("--gpus", default="8,64", help="GPU counts (8 a node)")
    p.add_argument("--gpus-per-node", type=int, default=8)
    p.add_argument("--mfu", default="0.15,0.30,0.45", help="assumed model-FLOPs utilisations")
    p.add_argument("--peak-tflops", type=float, default=989.0, help="H100 SXM bf16 dense")
    p.add_argument("--length", type=float, default=40.0,
                   help="padded sentence length (tokens + EOS) for the attention-score term, "
                        "token-weighted")
    p.add_argument("--fill", type=float, default=1.0,
                   help="padded positions a micro-batch holds, as a fraction of its token budget")
    p.add_argument("--intra-gbs", type=float, default=450.0,
                   help="NCCL all-reduce bus bandwidth inside a node (8 x H100, NVSwitch), GB/s")
    p.add_argument("--inter-gbs", type=float, default=300.0,
                   help="NCCL all-reduce bus bandwidth across nodes, GB/s (8 x 400 Gb/s "
                        "InfiniBand a node: 400 GB/s line rate, 75%%)")
    p.add_argument("--latency-us", type=float, default=5.0, help="per ring hop")
    p.add_argument("--bucket-mb", type=float, default=25.0)
    p.add_argument("--hidden", type=float, default=0.9,
                   help="fraction of the last backward pass that can hide all-reduce (overlap)")
    p.add_argument("--grad-bytes", type=int, default=4, help="4: fp32 gradients")
    p.add_argument("--optimizer-bytes", type=float, default=56.0,
                   help="HBM bytes per parameter per update outside forward/backward: fused "
                        "Adam (p, g, m, v read, p, m, v written: 28), the gradient division and "
                        "norm (12), zeroing and the reducer's bucket copies (16)")
    p.add_argument("--hbm-tbs", type=float, default=2.7,
                   help="achieved HBM bandwidth, TB/s (H100 SXM: 3.35 peak)")
    a = p.parse_args(argv)
    mfus = [float(x) for x in a.mfu.split(",")]
    gpu_counts = [int(x) for x in a.gpus.split(",")]
    bw_node = a.intra_gbs * 1e9

    rows, notes = [], []
    print("| model | GPUs | update: micro-batches x padded tokens a side | steps | TFLOP/update "
          "| MFU | compute ms | all-reduce ms | exposed ms | optimizer ms | ms/update "
          "| predicted wall time | without overlap | paper, 8 x P100 |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for path in a.configs.split(","):
        c = load_config(path)
        name = os.path.splitext(os.path.basename(path))[0]
        m, data, train = c["model"], c["data"], c["train"]
        params = parameter_count(m)
        micro_tokens = max(data["max_src_tokens"], data["max_tgt_tokens"])
        base_batches, base_steps = train["update_batches"], train["max_steps"]
        tokens = a.fill * micro_tokens
        f_micro = micro_batch_flops(m, tokens, a.length)
        paper_s, paper_total = PAPER_P100.get(name, (None, "-"))
        for gpus in gpu_counts:
            # jobs/slurm/big-multinode.sbatch (docs/cluster.md): one micro-batch per GPU above the
            # config's update_batches, the training tokens kept: steps x batches constant.
            batches = max(gpus, base_batches)
            if batches % gpus:
                raise SystemExit(f"{name}: {batches} micro-batches do not divide over {gpus} GPUs")
            per_rank = batches // gpus
            steps = round(base_steps * base_batches / batches)
            lr_factor = (batches / base_batches) ** 0.25
            bw = bw_node if gpus <= a.gpus_per_node else a.inter_gbs * 1e9
            t_opt = params * a.optimizer_bytes / (a.hbm_tbs * 1e12)
            for mfu in mfus:
                flops_per_s = a.peak_tflops * 1e12 * mfu
                t_compute = per_rank * f_micro / flops_per_s
                # Only the update's last backward pass can hide the all-reduce (the reducer's
                # hooks arm for the last micro-batch).
                t_comm, exposed = exposed_comm(f_micro / flops_per_s, params, a.grad_bytes, gpus,
                                               bw, a.latency_us * 1e-6, a.bucket_mb * 2**20,
                                               a.hidden, True)
                step = t_compute + exposed + t_opt
                hours = steps * step / 3600
                hours_serial = steps * (t_compute + t_comm + t_opt) / 3600
                paper = (f"{paper_total} ({paper_s} s/step)" if paper_s else "-")
                print(f"| {name} | {gpus} | {batches} x {micro_tokens:,} = "
                      f"{batches * micro_tokens:,} | {steps:,} | {batches * f_micro / 1e12:.1f} "
                      f"| {mfu:.0%} | {1e3 * t_compute:.1f} | {1e3 * t_comm:.2f} "
                      f"| {1e3 * exposed:.2f} | {1e3 * t_opt:.1f} | {1e3 * step:.1f} "
                      f"| {wall(hours)} | {wall(hours_serial)} | {paper} |")
            if gpus > base_batches:
                notes.append(f"{name} on {gpus} GPUs: {batches} micro-batches of {micro_tokens:,} "
                             f"tokens a side ({batches * micro_tokens:,} an update), {steps:,} "
                             f"steps (the training tokens of {base_steps:,} x "
                             f"{base_batches * micro_tokens:,}), lr_factor {lr_factor:.2f} "
                             f"(big-multinode.sbatch's rule)")
        # What the same count says about the paper's own P100 runs (fp32, 9.5 TFLOP/s each).
        if paper_s:
            implied = base_batches * f_micro / (8 * paper_s * P100_TFLOPS * 1e12)
            notes.append(f"{name}: {params:,} parameters; {f_micro / 1e12:.3f} TFLOP per "
                         f"micro-batch ({tokens:,.0f} padded positions a side, length "
                         f"{a.length:g}; length 20 / 80: "
                         f"{micro_batch_flops(m, tokens, 20) / f_micro - 1:+.1%} / "
                         f"{micro_batch_flops(m, tokens, 80) / f_micro - 1:+.1%}); "
                         f"training total {base_steps * base_batches * f_micro:.2e} FLOPs "
                         f"(paper's Table 2: GPU time x 9.5 TFLOP/s); the paper's {paper_s} s "
                         f"a step on 8 P100s is {implied:.0%} of 9.5 TFLOP/s by this count")
        if name == "big":
            r = DLE_V100_BIG
            mb = dict(m, vocab_size=r["vocab"])
            per_token = micro_batch_flops(mb, r["tokens_per_gpu"], a.length) / r["tokens_per_gpu"]
            achieved = per_token * r["tokens_per_s"] / r["gpus"]
            notes.append(f"reference: NVIDIA's fairseq Transformer big on 8 V100s (fp16, "
                         f"{r['tokens_per_gpu']} tokens a GPU): {r['tokens_per_s']:,} tokens/s is "
                         f"{achieved / 1e12:.0f} TFLOP/s a GPU by this count, "
                         f"{achieved / (r['peak_tflops'] * 1e12):.0%} of 125 TFLOP/s")
    print()
    print(f"Assumed: {a.peak_tflops:g} TFLOP/s bf16 dense peak x MFU {a.mfu}; all-reduce of "
          f"{a.grad_bytes}-byte gradients at {a.intra_gbs:g} GB/s bus bandwidth in a node, "
          f"{a.inter_gbs:g} GB/s across nodes, {a.latency_us:g} us a ring hop, "
          f"{a.bucket_mb:g} MB buckets, {a.hidden:.0%} of the last backward pass hiding it; "
          f"optimizer and gradient passes {a.optimizer_bytes:g} B a parameter at "
          f"{a.hbm_tbs:g} TB/s. Left out: data loading, validation, checkpoints, start-up, "
          f"stragglers, per-step host synchronisation and kernel-launch overhead beyond the MFU.")
    for n in notes:
        print(f"- {n}")


def main():
    import sys
    if len(sys.argv) > 1 and sys.argv[1] == "check":
        check(sys.argv[2:])
        return
    if len(sys.argv) > 1 and sys.argv[1] == "wmt14":
        wmt14(sys.argv[2:])
        return
    p = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="subcommands: 'check' (a measured layout against the model; check --help) and "
               "'wmt14' (predicted wall times of the paper's WMT14 runs on H100s; wmt14 --help)")
    p.add_argument("--tokens-per-gpu", type=float, default=3125,
                   help="source (= target) tokens per GPU per update")
    p.add_argument("--vocab", type=int, default=37000)
    p.add_argument("--peak-tflops", type=float, default=312.0, help="A100 bf16 dense")
    p.add_argument("--mfu", type=float, default=0.40, help="model-FLOPs utilisation per GPU")
    p.add_argument("--intra-gbs", type=float, default=230.0, help="NVLink bus bandwidth, GB/s")
    p.add_argument("--inter-gbs", type=float, default=90.0, help="multi-node bus bandwidth, GB/s")
    p.add_argument("--latency-us", type=float, default=5.0, help="per ring hop")
    p.add_argument("--bucket-mb", type=float, default=25.0)
    p.add_argument("--hidden", type=float, default=0.9,
                   help="fraction of the backward pass that can hide all-reduce (overlap)")
    p.add_argument("--grad-bytes", type=int, default=4, help="4: fp32 gradients")
    a = p.parse_args()
    print(f"{a.tokens_per_gpu:.0f}+{a.tokens_per_gpu:.0f} tokens per GPU per update (weak "
          f"scaling); {a.peak_tflops:.0f} TFLOP/s x MFU {a.mfu:.0%}; bus bandwidth "
          f"{a.intra_gbs:.0f} GB/s in a node, {a.inter_gbs:.0f} GB/s across nodes")
    print(f"{'model':<6}{'GPUs':>5}{'compute ms':>12}{'all-reduce ms':>15}"
          f"{'eff. no overlap':>17}{'eff. overlap':>14}")
    for name, (layers, d, d_ff, params) in MODELS.items():
        for gpus in (1, 8, 64):
            tokens = a.tokens_per_gpu
            t_compute = step_flops(layers, d, d_ff, a.vocab, tokens, tokens) / (
                a.peak_tflops * 1e12 * a.mfu)
            bw = (a.intra_gbs if gpus <= 8 else a.inter_gbs) * 1e9
            t_comm, exposed = exposed_comm(t_compute, params, a.grad_bytes, gpus, bw,
                                           a.latency_us * 1e-6, a.bucket_mb * 2**20, a.hidden,
                                           True)
            print(f"{name:<6}{gpus:>5}{1e3 * t_compute:>12.1f}{1e3 * t_comm:>15.1f}"
                  f"{t_compute / (t_compute + t_comm):>17.0%}"
                  f"{t_compute / (t_compute + exposed):>14.0%}")


if __name__ == "__main__":
    main()
