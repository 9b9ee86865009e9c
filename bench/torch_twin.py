"""The PyTorch side of bench/train_vs_pytorch.sh: the project's Transformer written as a PyTorch
user would write it, trained on the same synthetic batches as bench/train_throughput_bench, in
eager mode or under torch.compile.

The twin reads the model section of the same YAML config and builds the same network: scaled
embeddings (sqrt(d_model)) plus sinusoidal or learned positions, post- or pre-norm residual
blocks, multi-head attention through F.scaled_dot_product_attention (key padding and the causal
mask, attention_dropout), the ReLU feed-forward (ffn_dropout), Xavier-uniform weights and zero
biases, the embeddings shared as embedding_sharing says. The recipe is the trainer's: the
label-smoothed cross-entropy summed over target tokens, the gradients divided by the target token
count, Adam with beta2 0.98 and eps 1e-9 (PyTorch's default implementation on the CPU, foreach),
dropout as configured. A batch is rows = tokens // length sentences of `length` random ids in
[4, vocab), the same for source, target input and target output, no padding: the shapes the C++
bench times. It prints one JSON line: tokens/s (source + target) and seconds per step.

    python bench/torch_twin.py --config configs/multi30k.yaml [--tokens 2048] [--length 24]
        [--steps 5] [--warmup 2] [--threads 2] [--precision fp32|bf16] [--compile]
"""

import argparse
import json
import math
import time

import torch
import torch.nn.functional as F
import yaml
from torch import nn


def model_settings(path):
    with open(path) as f:
        config = yaml.safe_load(f) or {}
    m = config.get("model", {})
    return {
        "layers": m.get("layers", 6),
        "encoder_layers": m.get("encoder_layers", m.get("layers", 6)),
        "decoder_layers": m.get("decoder_layers", m.get("layers", 6)),
        "d_model": m.get("d_model", 512),
        "d_ff": m.get("d_ff", 2048),
        "heads": m.get("heads", 8),
        "d_k": m.get("d_k", 64),
        "d_v": m.get("d_v", 64),
        "dropout": m.get("dropout", 0.1),
        "attention_dropout": m.get("attention_dropout", 0.0),
        "ffn_dropout": m.get("ffn_dropout", 0.0),
        "positions": m.get("positions", "sinusoidal"),
        "max_positions": m.get("max_positions", 1024),
        "norm": m.get("norm", "post"),
        "embedding_sharing": m.get("embedding_sharing", "all"),
        "vocab_size": m.get("vocab_size", 37000),
        "layer_norm_eps": m.get("layer_norm_eps", 1e-5),
    }


def xavier_linear(n_in, n_out, bias=True):
    layer = nn.Linear(n_in, n_out, bias=bias)
    nn.init.xavier_uniform_(layer.weight)
    if bias:
        nn.init.zeros_(layer.bias)
    return layer


class Attention(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.heads, self.d_k, self.d_v = s["heads"], s["d_k"], s["d_v"]
        self.w_q = xavier_linear(s["d_model"], self.heads * self.d_k)
        self.w_k = xavier_linear(s["d_model"], self.heads * self.d_k)
        self.w_v = xavier_linear(s["d_model"], self.heads * self.d_v)
        self.w_o = xavier_linear(self.heads * self.d_v, s["d_model"])
        self.p = s["attention_dropout"]

    def split(self, x, width):
        return x.view(x.size(0), x.size(1), self.heads, width).transpose(1, 2)

    def forward(self, query, source, allowed):
        # allowed: bool, broadcastable to [batch, heads, q_len, k_len], True where attended
        q = self.split(self.w_q(query), self.d_k)
        k = self.split(self.w_k(source), self.d_k)
        v = self.split(self.w_v(source), self.d_v)
        context = F.scaled_dot_product_attention(
            q, k, v, attn_mask=allowed, dropout_p=self.p if self.training else 0.0)
        batch, _, q_len, _ = context.shape
        return self.w_o(context.transpose(1, 2).reshape(batch, q_len, self.heads * self.d_v))


class FeedForward(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.linear1 = xavier_linear(s["d_model"], s["d_ff"])
        self.linear2 = xavier_linear(s["d_ff"], s["d_model"])
        self.dropout = nn.Dropout(s["ffn_dropout"])

    def forward(self, x):
        return self.linear2(self.dropout(F.relu(self.linear1(x))))


class Residual(nn.Module):
    def __init__(self, s, sublayer):
        super().__init__()
        self.sublayer = sublayer
        self.norm = nn.LayerNorm(s["d_model"], eps=s["layer_norm_eps"])
        self.dropout = nn.Dropout(s["dropout"])
        self.pre = s["norm"] == "pre"

    def forward(self, x, *args):
        if self.pre:
            return x + self.dropout(self.sublayer(self.norm(x), *args))
        return self.norm(x + self.dropout(self.sublayer(x, *args)))


class SelfAttention(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.attention = Attention(s)

    def forward(self, x, allowed):
        return self.attention(x, x, allowed)


class EncoderLayer(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.attention = Residual(s, SelfAttention(s))
        self.feed_forward = Residual(s, FeedForward(s))

    def forward(self, x, allowed):
        return self.feed_forward(self.attention(x, allowed))


class DecoderLayer(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.self_attention = Residual(s, SelfAttention(s))
        self.cross_attention = Residual(s, Attention(s))
        self.feed_forward = Residual(s, FeedForward(s))

    def forward(self, y, memory, self_allowed, cross_allowed):
        y = self.self_attention(y, self_allowed)
        y = self.cross_attention(y, memory, cross_allowed)
        return self.feed_forward(y)


def sinusoids(length, d_model):
    position = torch.arange(length, dtype=torch.float32).unsqueeze(1)
    rate = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / d_model))
    table = torch.zeros(length, d_model)
    table[:, 0::2] = torch.sin(position * rate)
    table[:, 1::2] = torch.cos(position * rate)
    return table


class Transformer(nn.Module):
    def __init__(self, s):
        super().__init__()
        d, vocab = s["d_model"], s["vocab_size"]
        self.scale = math.sqrt(d)

        def embedding():
            e = nn.Embedding(vocab, d)
            nn.init.normal_(e.weight, 0.0, 1.0 / self.scale)
            return e

        self.src_embedding = embedding()
        self.tgt_embedding = self.src_embedding if s["embedding_sharing"] == "all" else embedding()
        self.projection = None
        if s["embedding_sharing"] == "none":
            self.projection = xavier_linear(d, vocab, bias=False)
        if s["positions"] == "learned":
            self.src_positions = nn.Parameter(torch.randn(s["max_positions"], d) / self.scale)
            self.tgt_positions = nn.Parameter(torch.randn(s["max_positions"], d) / self.scale)
        else:
            self.register_buffer("src_positions", sinusoids(s["max_positions"], d))
            self.tgt_positions = self.src_positions
        self.dropout = nn.Dropout(s["dropout"])
        self.encoder = nn.ModuleList(EncoderLayer(s) for _ in range(s["encoder_layers"]))
        self.decoder = nn.ModuleList(DecoderLayer(s) for _ in range(s["decoder_layers"]))
        self.pre = s["norm"] == "pre"
        if self.pre:
            self.encoder_norm = nn.LayerNorm(d, eps=s["layer_norm_eps"])
            self.decoder_norm = nn.LayerNorm(d, eps=s["layer_norm_eps"])

    def output_weight(self):
        return self.projection.weight if self.projection is not None else self.tgt_embedding.weight

    def forward(self, src, tgt_in):
        src_allowed = (src != 0)[:, None, None, :]  # [batch, 1, 1, src_len]
        length = tgt_in.size(1)
        causal = torch.ones(length, length, dtype=torch.bool, device=src.device).tril()
        tgt_allowed = (tgt_in != 0)[:, None, None, :] & causal  # [batch, 1, tgt_len, tgt_len]
        x = self.dropout(self.src_embedding(src) * self.scale + self.src_positions[: src.size(1)])
        for layer in self.encoder:
            x = layer(x, src_allowed)
        if self.pre:
            x = self.encoder_norm(x)
        y = self.dropout(self.tgt_embedding(tgt_in) * self.scale + self.tgt_positions[:length])
        for layer in self.decoder:
            y = layer(y, x, tgt_allowed, src_allowed)
        if self.pre:
            y = self.decoder_norm(y)
        return F.linear(y, self.output_weight())  # [batch, tgt_len, vocab]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", required=True)
    parser.add_argument("--tokens", type=int, default=4096)
    parser.add_argument("--length", type=int, default=24)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--threads", type=int, default=0, help="0: torch's default")
    parser.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    parser.add_argument("--compile", action="store_true", help="torch.compile the model")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    settings = model_settings(args.config)
    model = Transformer(settings).train()
    adam = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
    run = torch.compile(model) if args.compile else model
    rows = max(1, args.tokens // args.length)
    vocab = settings["vocab_size"]
    src = torch.randint(4, vocab, (rows, args.length))
    tgt_in = torch.randint(4, vocab, (rows, args.length))
    tgt_out = torch.randint(4, vocab, (rows, args.length))
    target_tokens = float(rows * args.length)
    autocast = args.precision == "bf16"

    def step():
        adam.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            logits = run(src, tgt_in)
        loss = F.cross_entropy(logits.float().view(-1, vocab), tgt_out.view(-1), ignore_index=0,
                               label_smoothing=0.1, reduction="sum")
        (loss / target_tokens).backward()
        adam.step()

    start = time.perf_counter()
    for _ in range(max(1, args.warmup)):
        step()
    warmup_seconds = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(args.steps):
        step()
    seconds = (time.perf_counter() - start) / args.steps
    print(json.dumps({
        "config": args.config, "mode": "compile" if args.compile else "eager",
        "precision": args.precision, "torch": torch.__version__,
        "threads": torch.get_num_threads(), "sentences": rows, "length": args.length,
        "parameters": sum(p.numel() for p in model.parameters()),
        "seconds_per_step": seconds, "tokens_per_second": 2.0 * rows * args.length / seconds,
        "warmup_seconds": warmup_seconds}))


if __name__ == "__main__":
    main()
