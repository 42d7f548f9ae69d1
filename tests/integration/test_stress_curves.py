#!/usr/bin/env python3
"""run/corpus/stress-curves: every run's noiseless level falls, then from its turn step does what
its kind says (`plateau` holds, `turn-up` rises at every step, `restart` jumps up and falls again,
`blow-up` rises faster at every step up to its cap of 50), and its loss is that level with log-normal
noise of the named size; the same seed writes the same file; a bad count exits 2 with nothing
written. Then forecast mode reads it and scores every kind as a family."""
import os
import subprocess
import sys

import h5py
import numpy as np

import hptest

a = hptest.args()
tool = os.path.join(a.root, "run/corpus/stress-curves")
out = os.path.join(a.work, "stress.h5")
r = subprocess.run([sys.executable, tool, out, "--runs-per-kind", "3", "--seed", "3"],
                   capture_output=True, text=True)
hptest.check(r.returncode == 0, "the tool writes a file", r.stderr[-2000:])


with h5py.File(out, "r") as f:
    runs = {n: (str(g.attrs["problem"]), int(g.attrs["turn_step"]), g["loss"][()], g["level"][()],
                g["step"][()], str(g.attrs["optimizer"])) for n, g in f["runs"].items()}
kinds = sorted({k for k, *_ in runs.values()})
hptest.check(kinds == ["blow-up", "plateau", "restart", "turn-up"] and len(runs) == 12,
             "three runs of each of the four kinds", str(kinds))
for name, (kind, t0, loss, level, steps, noise) in runs.items():
    sigma = float(noise.replace("noise", ""))
    resid = np.log(loss / level)
    hptest.check(np.array_equal(steps, np.arange(2000)) and sigma in (0.01, 0.05, 0.15)
                 and abs(np.std(resid) / sigma - 1) < 0.1 and abs(np.mean(resid)) < 0.01,
                 f"{name}: steps, and noise of the named size", f"{np.std(resid)} {sigma}")
    d_before, d_after = np.diff(level[:t0]), np.diff(level[t0:])
    hptest.check(np.all(d_before < 0), f"{name}: falls until its turn step {t0}")
    if kind == "plateau":
        ok = np.all(level[t0:] == level[t0])
    elif kind == "turn-up":
        ok = np.all(d_after > 0)
    elif kind == "restart":
        ok = level[t0] > level[t0 - 1] and np.all(d_after < 0)
    else:
        ok = np.all(d_after[level[t0 + 1:] < 50] > 0) and np.all(np.diff(d_after)[level[t0 + 2:] < 50] > 0) \
            and level.max() <= 50
    hptest.check(ok, f"{name}: a {kind} from step {t0}")

again = os.path.join(a.work, "again.h5")
subprocess.run([sys.executable, tool, again, "--runs-per-kind", "3", "--seed", "3"], check=True,
               capture_output=True)
with h5py.File(out, "r") as f, h5py.File(again, "r") as g:
    same = all(np.array_equal(f[f"runs/{n}/loss"][()], g[f"runs/{n}/loss"][()]) for n in runs)
hptest.check(same, "the same seed writes the same curves")
bad = os.path.join(a.work, "bad.h5")
r = subprocess.run([sys.executable, tool, bad, "--runs-per-kind", "0"], capture_output=True, text=True)
hptest.check(r.returncode == 2 and "--runs-per-kind" in r.stderr and not os.path.exists(bad)
             and not os.path.exists(bad + ".tmp"), "a count of 0 exits 2 naming it, nothing written",
             r.stderr)

r = hptest.run(a.hpt, hptest.deck_path(a.root, "forecast.ini"), f"forecast.input={out}",
               "forecast.horizons=10,50", "forecast.every=50", "forecast.ensemble=off",
               f"output.dir={a.work}", "output.name=fc", cwd=a.root)
hptest.check(r.returncode == 0, "forecast mode reads the file", r.stderr[-2000:])
fam = subprocess.run([os.path.join(a.root, "run/post/forecast-families"),
                      os.path.join(a.work, "fc.h5"), out, "--by", "problem"],
                     capture_output=True, text=True)
hptest.check(fam.returncode == 0 and all(f"| {k} |" in fam.stdout for k in kinds),
             "forecast-families scores each kind as a family", fam.stdout[-1500:] + fam.stderr)
hptest.finish()
