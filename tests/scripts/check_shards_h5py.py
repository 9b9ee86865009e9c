#!/usr/bin/python3
"""Reads an nmt-preprocess output directory with h5py exactly as docs/formats.md documents the
format, and checks it against manifest.json. Exit status 0 when everything matches."""
import hashlib
import json
import sys

import h5py
import numpy as np


def check_shard(path, info, vocab_size):
    with h5py.File(path, "r") as f:
        assert f.attrs["format"] == "nmt-shard", f.attrs["format"]
        assert int(f.attrs["format_version"]) == 1
        pairs = int(f.attrs["num_pairs"])
        assert pairs == info["pairs"], (pairs, info["pairs"])
        assert int(f.attrs["vocab_size"]) == vocab_size
        json.loads(f.attrs["sources"])
        cleaning = json.loads(f.attrs["cleaning"])
        assert cleaning["read"] >= cleaning["kept"]
        for side in ("src", "tgt"):
            tokens = f[side + "/tokens"][()]
            offsets = f[side + "/offsets"][()]
            assert tokens.dtype == np.int32 and offsets.dtype == np.int64
            assert len(offsets) == pairs + 1 and offsets[0] == 0 and offsets[-1] == len(tokens)
            assert np.all(np.diff(offsets) >= 0)
            assert tokens.size == 0 or (tokens.min() >= 0 and tokens.max() < vocab_size)
            assert len(tokens) == info[side + "_tokens"]
        assert len(f["index"][()]) == pairs
    return pairs


def main(directory):
    with open(directory + "/manifest.json") as f:
        manifest = json.load(f)
    vocab_size = manifest["vocab"]["size"]
    total = 0
    for name, split in manifest["splits"].items():
        for info in split["shards"]:
            path = directory + "/" + info["file"]
            with open(path, "rb") as f:
                assert hashlib.sha256(f.read()).hexdigest() == info["sha256"], path
            total += check_shard(path, info, vocab_size)
        assert sum(s["pairs"] for s in split["shards"]) == split["pairs"]
    print("h5py: %d pairs in %d splits verified" % (total, len(manifest["splits"])))


if __name__ == "__main__":
    main(sys.argv[1])
