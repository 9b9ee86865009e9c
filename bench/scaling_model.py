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


def main():
    import sys
    if len(sys.argv) > 1 and sys.argv[1] == "check":
        check(sys.argv[2:])
        return
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
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
