"""Exact restart: 2n steps straight and n steps + restart + n steps give identical traces (every column but wall
time, and the encoder's features) and bit-identical parameters, optimizer state and normaliser statistics, on OpenMP with 1 and with 2 threads. Checkpoints
whose format version, model shape or checksum does not match are refused with exit code 2."""
import os

import numpy as np

import hptest

a = hptest.args()
h5py = hptest.h5()
deck = hptest.deck_path(a.root, "xor.ini")
N = 40
base = ["train.val_every=10", "run.print_every=20", "checkpoint.every=0", "dataset.samples=600"]


def trace(path):
    with h5py.File(path, "r") as f:
        out = {k: f["steps"][k][()] for k in f["steps"].keys() if k != "wall_time"}
        out["features"] = f["features"][()]
        for k in f["forecasts"].keys():
            out["forecasts/" + k] = f["forecasts"][k][()]
        return out


def state(path):
    with h5py.File(path, "r") as f:
        out = {"model": f["model/parameters"][()]}
        for k in f["optimizer"].keys():
            out["opt/" + k] = f["optimizer"][k][()]
        for k in f["encoder"].keys():
            out["encoder/" + k] = f["encoder"][k][()]
        if "forecaster" in f:
            f["forecaster"].visititems(lambda name, obj: out.__setitem__("forecaster/" + name, obj[()])
                                       if isinstance(obj, h5py.Dataset) else None)
        out["step"] = f.attrs["step"]
        return out


FORECASTER = ["train.forecaster=true", "dynamics.members=2", "dynamics.hidden=8", "dynamics.stochastic=4",
              "dynamics.bptt=4", "forecast.horizons=5,10", "forecast.every=5", "forecast.scenarios=4"]
for threads in (1, 2):
    for opt in ("adam", "sgd", "adam+forecaster"):
        out = os.path.join(a.work, f"t{threads}_{opt}")
        common = base + [f"output.dir={out}", f"run.threads={threads}",
                         f"optimizer.style={opt.split('+')[0]}"] + (FORECASTER if "forecaster" in opt else [])
        if opt == "sgd":
            common += ["optimizer.lr=0.05", "optimizer.nesterov=true"]
        r1 = hptest.run(a.hpt, deck, *common, f"train.steps={2 * N}", "output.name=straight")
        r2 = hptest.run(a.hpt, deck, *common, f"train.steps={N}", "output.name=split")
        r3 = hptest.run(a.hpt, deck, *common, f"train.steps={2 * N}", "output.name=split", "run.restart=auto")
        ok = all(r.returncode == 0 for r in (r1, r2, r3))
        hptest.check(ok, f"{threads} thread(s), {opt}: the three runs succeed",
                     "\n".join(r.stderr[-500:] for r in (r1, r2, r3)))
        if not ok:
            continue
        hptest.check(f"at step {N}" in r3.stdout, f"{threads} thr {opt}: restart reports step {N}", r3.stdout[-800:])
        ta = trace(os.path.join(out, "straight_trace.h5"))
        tb = trace(os.path.join(out, "split_trace.h5"))
        hptest.check(len(ta["step"]) == 2 * N and list(tb["step"]) == list(range(1, 2 * N + 1)),
                     f"{threads} thr {opt}: restarted trace has every step once", str(tb["step"]))
        same = all(np.array_equal(ta[k], tb[k], equal_nan=True) for k in ta)
        hptest.check(same, f"{threads} thr {opt}: traces identical (all columns but wall time)",
                     str([k for k in ta if not np.array_equal(ta[k], tb[k], equal_nan=True)]))
        ck = f"_ckpt_{2 * N:010d}.h5"
        sa = state(os.path.join(out, "straight" + ck))
        sb = state(os.path.join(out, "split" + ck))
        hptest.check(sa.keys() == sb.keys() and all(np.array_equal(sa[k], sb[k]) for k in sa),
                     f"{threads} thr {opt}: final parameters and optimizer state bit-identical")

# Refusals, from the checkpoint of the first case.
out = os.path.join(a.work, "t1_adam")
ck = os.path.join(out, f"split_ckpt_{2 * N:010d}.h5")
common = base + [f"output.dir={out}", "optimizer.style=adam", "output.name=refuse", f"train.steps={3 * N}"]
r = hptest.run(a.hpt, deck, *common, "model.layers=2,16,2", f"run.restart={ck}")
hptest.check(r.returncode == 2 and "checkpoint" in r.stderr and "2-16-2" in r.stderr.replace(" ", ""),
             "restart with another model shape: exit 2 naming the checkpoint and the shapes", r.stderr)
bad = os.path.join(a.work, "damaged.h5")
with open(ck, "rb") as f, open(bad, "wb") as g:
    g.write(f.read())
with h5py.File(bad, "r+") as f:
    p = f["model/parameters"]
    v = p[()]
    v[0] += 1.0
    p[...] = v
r = hptest.run(a.hpt, deck, *common, f"run.restart={bad}")
hptest.check(r.returncode == 2 and "checksum" in r.stderr and "damaged.h5" in r.stderr,
             "damaged checkpoint: exit 2 naming the checksum", r.stderr)
with h5py.File(bad, "r+") as f:
    f.attrs["hpt_format_version"] = np.int64(99)
r = hptest.run(a.hpt, deck, *common, f"run.restart={bad}")
hptest.check(r.returncode == 2 and "version" in r.stderr, "wrong format version: exit 2", r.stderr)
r = hptest.run(a.hpt, deck, *common, "run.restart=" + os.path.join(a.work, "nope.h5"))
hptest.check(r.returncode == 2 and "run.restart" in r.stderr and "nope.h5" in r.stderr,
             "missing restart file: exit 2 naming run.restart", r.stderr)
hptest.finish()
