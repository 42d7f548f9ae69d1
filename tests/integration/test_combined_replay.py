#!/usr/bin/env python3
"""run/post/combined-replay: replayed from a forecast output alone, the combined forecast equals the
one hpt wrote, row for row; the same replay without the clamp of the guards, without the error
ratio of the weights, with one memory for every horizon, on the clock of logged steps, or with the
cap for a missing guard, differs; with forecast.guard_clamp = length on runs of 300 steps the guards
are free, and with trend free but for loglin where its slope is noise, and the replay follows
(so the check sees each). With the ensemble on, its `residual` report gives per horizon the least-squares
share of the learned forecast's error that the ensemble's median explains."""
import os
import subprocess
import sys
from importlib.machinery import SourceFileLoader

import h5py
import numpy as np

import hptest

a = hptest.args()
script = os.path.join(a.root, "run/post/combined-replay")
curves = os.path.join(a.root, "tests/data/curves/hpt-sweep.h5")
r = hptest.run(a.hpt, hptest.deck_path(a.root, "forecast.ini"), f"forecast.input={curves}",
               "forecast.horizons=10,50,200", "forecast.every=20", "forecast.ensemble=off",
               f"output.dir={a.work}", "output.name=fc", cwd=a.root)
hptest.check(r.returncode == 0, "forecast mode on hpt's sweep", r.stderr[-2000:])
out = os.path.join(a.work, "fc.h5")
replay = SourceFileLoader("combined_replay", script).load_module()
d = replay.load(out)
hpt = d["base"]["combined"]
mine = replay.replay(out, dict(fma=None), data=d)
same_nan = np.array_equal(np.isnan(mine), np.isnan(hpt))
diff = np.nanmax(np.abs(mine - hpt))
hptest.check(same_nan and diff < 1e-12, "the replay equals hpt's combined forecast", f"{diff}")
unclamped = replay.replay(out, dict(fma=None, clip_to_learned=False), data=d)
hptest.check(np.nanmax(np.abs(unclamped - hpt)) > 1e-6, "without the clamp the replay differs")
no_ratio = replay.replay(out, dict(fma=None, ratio_floor=None), data=d)
hptest.check(np.nanmax(np.abs(no_ratio - hpt)) > 1e-6, "without the error ratio the replay differs")
one_memory = replay.replay(out, dict(fma=None, long_memory=200.0), data=d)
hptest.check(np.nanmax(np.abs(one_memory - hpt)) > 1e-6, "with one memory the replay differs")
# hpt-sweep's runs are 1000 steps: on the default clock (length) 0.5, so the steps clock differs.
on_steps = replay.replay(out, dict(fma=None, clock="steps"), data=d)
hptest.check(d["clock"] == "length" and np.nanmax(np.abs(on_steps - hpt)) > 1e-6,
             "the output's clock is length, and on the clock of steps the replay differs")
capped = replay.replay(out, dict(fma=None, missing=2.0), data=d)
hptest.check(np.nanmax(np.abs(capped - hpt)) > 1e-6, "with the cap for a missing guard it differs")
# forecast.guard_clamp = length on runs of 300 steps (the sweep's first 300 steps): their guards
# are not clamped; the replay, which reads the option from the deck, follows; with the clamp it
# differs.
short_curves = os.path.join(a.work, "short_curves.h5")
with h5py.File(curves, "r") as src, h5py.File(short_curves, "w") as dst:
    for name, g in src["runs"].items():
        for key in ("step", "loss", "lr"):
            dst.create_dataset(f"runs/{name}/{key}", data=g[key][:300])
r = hptest.run(a.hpt, hptest.deck_path(a.root, "forecast.ini"), f"forecast.input={short_curves}",
               "forecast.horizons=10,50", "forecast.every=10", "forecast.ensemble=off",
               "forecast.guard_clamp=length", f"output.dir={a.work}", "output.name=short", cwd=a.root)
hptest.check(r.returncode == 0, "forecast mode on short runs with guard_clamp = length",
             r.stderr[-2000:])
short_out = os.path.join(a.work, "short.h5")
ds = replay.load(short_out)
free = replay.replay(short_out, dict(fma=None), data=ds)
clamped = replay.replay(short_out, dict(fma=None, guard_clamp="always"), data=ds)
diff = np.nanmax(np.abs(free - ds["base"]["combined"]))
hptest.check(ds["guard_clamp"] == "length" and diff < 1e-9,
             "short runs: the replay without the clamp equals hpt's combined forecast", f"{diff}")
hptest.check(np.nanmax(np.abs(clamped - ds["base"]["combined"])) > 1e-6,
             "short runs: replayed with the clamp it differs")
# forecast.guard_clamp = trend on the same short runs: /forecasts/loglin_t is loglin's slope over
# its standard error (recomputed here from the curves over the steps (t - 100, t]); the replay
# follows hpt, and differs from both length and always where some rows' slopes are noise and
# others' are not.
r = hptest.run(a.hpt, hptest.deck_path(a.root, "forecast.ini"), f"forecast.input={short_curves}",
               "forecast.horizons=10,50", "forecast.every=10", "forecast.ensemble=off",
               "forecast.guard_clamp=trend", f"output.dir={a.work}", "output.name=trend", cwd=a.root)
hptest.check(r.returncode == 0, "forecast mode on short runs with guard_clamp = trend", r.stderr[-2000:])
trend_out = os.path.join(a.work, "trend.h5")
dt = replay.load(trend_out)
with h5py.File(short_curves, "r") as f:
    by_id = {name: (f[f"runs/{name}/step"][:], np.log(np.maximum(f[f"runs/{name}/loss"][:], 1e-12)))
             for name in f["runs"]}
worst = 0.0
for i in range(0, len(dt["run"]), 37):
    st, y = by_id[dt["ids"][int(dt["run"][i])]]
    o = dt["origin"][i]
    sel = (st <= o) & (st > o - 100)
    x, yy = st[sel].astype(float), y[sel]
    if len(x) < 4:
        continue
    b, c = np.polyfit(x, yy, 1)
    se = np.sqrt(np.sum((yy - b * x - c) ** 2) / (len(x) - 2) / np.sum((x - x.mean()) ** 2))
    worst = max(worst, abs(dt["loglin_t"][i] - abs(b) / se) / (abs(b) / se))
hptest.check(worst < 1e-6, "loglin_t is the slope over its standard error", f"{worst}")
significant = dt["loglin_t"] >= 3
hptest.check(significant.any() and (~significant).any(), "some rows' slopes are significant, some not",
             f"{significant.mean()}")
trend = replay.replay(trend_out, dict(fma=None), data=dt)
diff = np.nanmax(np.abs(trend - dt["base"]["combined"]))
hptest.check(dt["guard_clamp"] == "trend" and diff < 1e-9, "short runs: the replay equals hpt with trend",
             f"{diff}")
for other in ("length", "always"):
    alt = replay.replay(trend_out, dict(fma=None, guard_clamp=other), data=dt)
    hptest.check(np.nanmax(np.abs(alt - dt["base"]["combined"])) > 1e-6,
                 f"short runs: replayed with {other} it differs")
v = subprocess.run([sys.executable, script, "verify", out], capture_output=True, text=True)
hptest.check(v.returncode == 0 and "NaN mismatches 0" in v.stdout, "the verify command runs", v.stdout + v.stderr)

# The ensemble as a corrector: beta* against a least-squares fit done here.
r = hptest.run(a.hpt, hptest.deck_path(a.root, "forecast.ini"), f"forecast.input={curves}",
               "forecast.horizons=10,50", "forecast.every=50", "dynamics.members=2",
               "dynamics.hidden=8", "dynamics.stochastic=4", "forecast.scenarios=4",
               f"output.dir={a.work}", "output.name=ens", cwd=a.root)
hptest.check(r.returncode == 0, "forecast mode with the ensemble", r.stderr[-2000:])
ens_out = os.path.join(a.work, "ens.h5")
v = subprocess.run([sys.executable, script, "residual", ens_out], capture_output=True, text=True)
lines = {int(l.split("h=")[1].split()[0]): float(l.split("beta*")[1].split()[0])
         for l in v.stdout.splitlines() if "beta*" in l}
e = replay.load(ens_out)
with h5py.File(ens_out, "r") as f:
    q50 = f["forecasts/q50"][...]
for h in (10, 50):
    s = (e["horizon"] == h) & np.isfinite(e["target"]) & np.isfinite(q50)
    dd = (q50 - e["base"]["learned"])[s]
    fit = np.linalg.lstsq(dd[:, None], (e["target"] - e["base"]["learned"])[s], rcond=None)[0][0]
    hptest.check(h in lines and abs(lines[h] - fit) < 1e-3, f"residual report, h = {h}: beta* "
                 "is the least-squares share", f"{lines.get(h)} against {fit}; {v.stdout}{v.stderr}")
hptest.finish()
