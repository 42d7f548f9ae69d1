"""The encoder runs at every training step: on the digits reference run (SGD momentum 0.9, lr 0.05, batch 32,
64-128-10) at least 48 of the 64 rich features vary over the run (non-zero variance after the first 50 steps), none
is ever NaN, and every Adam-only feature varies on the same run with Adam. In rollout mode the normaliser has seen
the whole synthetic history, so the rollout starts from features that are not all zero."""
import os

import numpy as np

import hptest

a = hptest.args()
h5py = hptest.h5()
out = os.path.join(a.work, "out")


def features(name):
    with h5py.File(os.path.join(out, name + "_trace.h5"), "r") as f:
        return f["features"][()]


varying = {}
for opt in ("sgd", "adam"):
    sets = [f"output.dir={out}", f"output.name={opt}", "train.steps=1500", "run.print_every=500",
            f"optimizer.style={opt}"] + (["optimizer.lr=0.001"] if opt == "adam" else [])
    r = hptest.run(a.hpt, hptest.deck_path(a.root, "digits-baseline.ini"), *sets)
    hptest.check(r.returncode == 0, f"digits {opt}: run succeeds", r.stderr[-400:])
    if r.returncode != 0:
        continue
    F = features(opt)
    hptest.check(F.shape == (1500, 64), f"digits {opt}: one feature row per step", str(F.shape))
    hptest.check(np.isfinite(F).all(), f"digits {opt}: features are finite")
    varying[opt] = F[50:].std(axis=0) > 0
    print(f"      {opt}: {int(varying[opt].sum())} of 64 features vary")
hptest.check("sgd" in varying and varying["sgd"].sum() >= 48, "digits reference (sgd): at least 48 features vary",
             str(varying.get("sgd")))
hptest.check("adam" in varying and varying["adam"].sum() >= varying.get("sgd", np.zeros(64)).sum(),
             "digits with adam: at least as many features vary (moment and variance features come alive)")

r = hptest.run(a.hpt, hptest.deck_path(a.root, "rollout-synthetic.ini"), f"output.dir={out}", "rollout.horizon=5",
               "rollout.scenarios=2", "dynamics.hidden=16")
with h5py.File(os.path.join(out, "rollout-synthetic.h5"), "r") as f:
    x = f["features"][()]
hptest.check(r.returncode == 0 and np.count_nonzero(x) >= 32,
             "rollout mode: the encoded features are not all zero (normaliser saw the whole history)",
             f"{np.count_nonzero(x)} non-zero")
hptest.finish()
