#!/usr/bin/env python3
"""Checkpoints as h5py alone reads them (trainer/checkpoint/checkpoint.h defines the format).

  check_checkpoint_h5py.py FILE                 every tensor float32 (uint8 for the RNG states and
                                                the vocabulary), its crc32 attribute zlib's CRC-32
                                                of its bytes, the root attributes there and
                                                state_sha256 their hash
  check_checkpoint_h5py.py --same FILE_A FILE_B the same datasets (names, dtypes, shapes, values bit
                                                for bit) and the same attributes, but for those of
                                                the writing process (elapsed_seconds, run_uid,
                                                state_sha256) and the values of rng/ (an
                                                nmt-average's generators are not seeded)
Prints what it checked; exits 1 naming the first difference.
"""
import hashlib
import struct
import sys
import zlib

import h5py
import numpy as np

ROOT_ATTRIBUTES = ("format", "format_version", "step", "epoch", "batch_in_epoch", "optimizer_step",
                   "best_valid_nll", "validations_without_improvement", "elapsed_seconds",
                   "averaged_from", "vocab_sha256", "config", "run_uid", "log_window_updates",
                   "log_window_tgt_tokens", "log_window_loss_sum", "log_window_nll_sum",
                   "tgt_tokens", "state_sha256")
# The attributes state_sha256 covers, in its order, with their kinds (checkpoint_state.cpp).
STATE_ATTRIBUTES = (("format", "t"), ("step", "i"), ("epoch", "i"), ("batch_in_epoch", "i"),
                    ("optimizer_step", "i"), ("best_valid_nll", "d"),
                    ("validations_without_improvement", "i"), ("elapsed_seconds", "d"),
                    ("averaged_from", "i"), ("vocab_sha256", "t"), ("config", "t"), ("run_uid", "t"),
                    ("log_window_updates", "i"), ("log_window_tgt_tokens", "i"),
                    ("log_window_loss_sum", "d"), ("log_window_nll_sum", "d"),
                    ("tgt_tokens", "i"))
# Attributes that differ between two processes writing the same state: a training time, the run's
# uid, and the checksum over them.
PER_PROCESS = ("elapsed_seconds", "run_uid", "state_sha256")


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def state_checksum(attrs):
    """SHA-256 of the state attributes as "name:kind:length:value\\n" records (checkpoint.h)."""
    data = b""
    for name, kind in STATE_ATTRIBUTES:
        if name not in attrs:
            continue
        if kind == "i":
            value = str(int(attrs[name])).encode()
        elif kind == "d":
            value = struct.pack(">d", float(attrs[name])).hex().encode()
        else:
            value = text(attrs[name]).encode()
        data += f"{name}:{kind}:{len(value)}:".encode() + value + b"\n"
    return hashlib.sha256(data).hexdigest()


def datasets(f):
    names = []
    f.visititems(lambda name, obj: names.append(name) if isinstance(obj, h5py.Dataset) else None)
    return sorted(names)


def check(path):
    with h5py.File(path, "r") as f:
        assert f.attrs["format"] == "nmt-checkpoint", f"{path}: format {f.attrs['format']!r}"
        missing = [a for a in ROOT_ATTRIBUTES if a not in f.attrs]
        assert not missing, f"{path}: no root attributes {missing}"
        digest = state_checksum(f.attrs)
        stored = text(f.attrs["state_sha256"])
        assert digest == stored, f"{path}: state attributes hash to {digest}, stored {stored}"
        names = datasets(f)
        assert any(n.startswith("model/") for n in names), f"{path}: no parameters"
        for name in names:
            values = f[name][()]
            expected = np.uint8 if name.startswith(("rng/", "vocab/")) else np.float32
            assert values.dtype == expected, f"{path}: {name} is {values.dtype}, not {expected}"
            if name.startswith("vocab/"):
                continue  # verified through vocab_sha256
            crc = zlib.crc32(np.ascontiguousarray(values).tobytes())
            stored = int(f[name].attrs["crc32"])
            assert crc == stored, f"{path}: {name} has CRC-32 {crc:08x}, its attribute {stored:08x}"
        print(f"{path}: {len(names)} datasets, every checksum matches")


def attributes(obj):
    return {k: v for k, v in obj.attrs.items() if k not in PER_PROCESS}


def same(path_a, path_b):
    with h5py.File(path_a, "r") as a, h5py.File(path_b, "r") as b:
        names = datasets(a)
        assert names == datasets(b), f"different datasets: {set(names) ^ set(datasets(b))}"
        for name in names:
            x, y = a[name][()], b[name][()]
            assert x.dtype == y.dtype and x.shape == y.shape, f"{name}: {x.dtype}{x.shape} vs {y.dtype}{y.shape}"
            if name.startswith("rng/"):
                continue
            assert x.tobytes() == y.tobytes(), f"{name}: values differ"
            assert attributes(a[name]) == attributes(b[name]), f"{name}: attributes differ"
        ra, rb = attributes(a), attributes(b)
        assert ra.keys() == rb.keys(), f"root attributes differ: {set(ra) ^ set(rb)}"
        for key in ra:
            assert np.array_equal(ra[key], rb[key]), f"root attribute {key}: {ra[key]!r} vs {rb[key]!r}"
        print(f"{path_a} and {path_b}: {len(names)} datasets and {len(ra)} root attributes identical")


if __name__ == "__main__":
    try:
        if sys.argv[1] == "--same":
            same(sys.argv[2], sys.argv[3])
        else:
            for p in sys.argv[1:]:
                check(p)
    except AssertionError as e:
        print(f"FAILED: {e}")
        sys.exit(1)
