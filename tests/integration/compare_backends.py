"""Same deck, same seed on two builds (the GPU host's CUDA hpt and the CPU build's OpenMP hpt): the rollout's loss
paths, final latents and features must agree within the precision-scaled tolerance of the unit tests, since the
random draws are counter-based and only the order of sums differs. Not a ctest test (it needs both builds):
run/device/run.sh calls it.  compare_backends.py --hpt CUDA_HPT --other OPENMP_HPT --root BUNDLE --work DIR"""
import argparse
import os
import shutil

import numpy as np

import hptest

p = argparse.ArgumentParser()
p.add_argument("--hpt", required=True)
p.add_argument("--other", required=True)
p.add_argument("--root", required=True)
p.add_argument("--work", required=True)
a = p.parse_args()
shutil.rmtree(a.work, ignore_errors=True)
os.makedirs(a.work)
h5py = hptest.h5()

H, I, S = 256, 64, 32
# (scenarios, horizon): one scenario picks the persistent kernel on the GPU, 64 the tiled one.
for N, Y in [(1, 100), (64, 50)]:
    files = []
    for name, exe in (("a", a.hpt), ("b", a.other)):
        out = os.path.join(a.work, f"{name}{N}")
        r = hptest.run(exe, hptest.deck_path(a.root, "rollout.ini"), "rollout.model=", f"rollout.scenarios={N}",
                       f"rollout.horizon={Y}", f"dynamics.hidden={H}", f"dynamics.stochastic={S}",
                       f"output.dir={out}", extra=("--set", "run.seed=11"))
        hptest.check(r.returncode == 0, f"{os.path.basename(exe)} rollout N={N} runs", r.stderr[-400:])
        files.append(os.path.join(out, "rollout.h5"))
    if not all(os.path.exists(f) for f in files):
        continue
    # The unit tests' tolerance: 4 (Y + 1) * 16 eps sqrt(H + I + 1), relative to max(1, |reference|).
    tol = 4 * (Y + 1) * 16 * np.finfo(np.float32).eps * np.sqrt(H + I + 1)
    with h5py.File(files[0], "r") as fa, h5py.File(files[1], "r") as fb:
        for key in ("paths", "features"):
            x, ref = fa[key][()].astype(np.float64), fb[key][()].astype(np.float64)
            dev = np.max(np.abs(x - ref) / np.maximum(1.0, np.abs(ref))) if x.shape == ref.shape else np.inf
            hptest.check(dev <= tol, f"N={N}: {key} agree across backends (max dev {dev:.2e}, tol {tol:.1e})")
        bk = (fa.attrs["hpt_backend"], fb.attrs["hpt_backend"])
        hptest.check(bk[0] != bk[1], f"N={N}: two different backends compared ({bk[0]} / {bk[1]})")
hptest.finish()
