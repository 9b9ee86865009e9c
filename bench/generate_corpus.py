#!/usr/bin/python3
"""Writes a synthetic parallel corpus for scale tests: N pairs of Zipf-distributed words from two
made-up lexicons (sizes and lengths like WMT news text), gzipped or plain. Deterministic per seed.

  generate_corpus.py N OUT_PREFIX [--gzip] [--seed S]   ->  OUT_PREFIX.en, OUT_PREFIX.de
"""
import argparse
import gzip

import numpy as np


def lexicon(rng, size, alphabet):
    lengths = rng.integers(2, 12, size)
    letters = rng.integers(0, len(alphabet), int(lengths.sum()))
    words, pos = [], 0
    for n in lengths:
        words.append("".join(alphabet[i] for i in letters[pos:pos + n]))
        pos += n
    return np.array(words, dtype=object)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("pairs", type=int)
    parser.add_argument("prefix")
    parser.add_argument("--gzip", action="store_true")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    en = lexicon(rng, 60000, "abcdefghijklmnopqrstuvwxyz")
    de = lexicon(rng, 80000, "abcdefghijklmnopqrstuvwxyzäöüß")
    opener = (lambda p: gzip.open(p + ".gz", "wt", compresslevel=1)) if args.gzip else (lambda p: open(p, "w"))
    with opener(args.prefix + ".en") as fen, opener(args.prefix + ".de") as fde:
        block = 100000
        for start in range(0, args.pairs, block):
            n = min(block, args.pairs - start)
            lengths = rng.integers(3, 40, n)
            total = int(lengths.sum())
            src = en[np.minimum(rng.zipf(1.2, total) - 1, len(en) - 1)]
            tgt = de[np.minimum(rng.zipf(1.2, total) - 1, len(de) - 1)]
            pos, out_en, out_de = 0, [], []
            for k in lengths:
                out_en.append(" ".join(src[pos:pos + k]))
                out_de.append(" ".join(tgt[pos:pos + k]))
                pos += k
            fen.write("\n".join(out_en) + "\n")
            fde.write("\n".join(out_de) + "\n")


if __name__ == "__main__":
    main()
