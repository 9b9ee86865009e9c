"""Compares the model parameters of two nmt-train checkpoints (HDF5, group "model").

Usage: compare_params.py A.h5 B.h5 TOLERANCE   (TOLERANCE 0: bit for bit)
Exit 0 when every parameter matches, 1 with the largest differences otherwise.
"""
import sys

import h5py
import numpy as np


def params(path):
    with h5py.File(path, "r") as f:
        return {name: np.asarray(f["model"][name]) for name in f["model"]}


a, b, tolerance = params(sys.argv[1]), params(sys.argv[2]), float(sys.argv[3])
if a.keys() != b.keys():
    sys.exit(f"different parameters: {sorted(a.keys() ^ b.keys())}")
worst = sorted(((float(np.max(np.abs(a[k].astype(np.float64) - b[k]))), k) for k in a), reverse=True)
same = all(np.array_equal(a[k], b[k]) for k in a) if tolerance == 0 else worst[0][0] <= tolerance
print(f"{len(a)} parameters, largest difference {worst[0][0]:.3g} ({worst[0][1]}); "
      f"{'match' if same else 'DIFFER'} at tolerance {tolerance:g}")
if not same:
    for diff, name in worst[:5]:
        print(f"  {name}: {diff:.3g}")
sys.exit(0 if same else 1)
