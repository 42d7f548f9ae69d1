#!/usr/bin/env python3
"""run/post/prune-compare: on a sweep built here whose levels are known, every rule stops exactly
the runs its definition names, and the ceilings keep the fewest runs that still hold each group's
best one (by the level at the judging point, and by hpt's forecast final level)."""
import json
import os
import subprocess
import sys

import h5py
import numpy as np

import hptest

a = hptest.args()
script = os.path.join(a.root, "run/post/prune-compare")

# Two groups of runs of 100 steps, judged at step 25. Each run's loss is one value up to the
# judging point and another after it, so its level there and its final level are those values.
# Group g1: by the level at step 25 the best run (final 0.1) ranks third of four; hpt's forecast
# ranks it first. Group g2: two runs, the best also the lowest now.
RUNS = {  # id: (group, level at 25, final level, hpt stopped, hpt forecast final)
    "a": ("g1", 1.0, 0.5, 0, 0.6),
    "b": ("g1", 2.0, 0.4, 0, 0.7),
    "c": ("g1", 3.0, 0.1, 1, 0.2),
    "d": ("g1", 4.0, 0.9, 1, 0.9),
    "e": ("g2", 1.0, 0.3, 0, 0.3),
    "f": ("g2", 2.0, 0.6, 1, 0.8),
}
curves = os.path.join(a.work, "curves.h5")
forecast = os.path.join(a.work, "forecast.h5")
with h5py.File(curves, "w") as c, h5py.File(forecast, "w") as f:
    f.create_group("stop").attrs["stop_at"] = 0.25
    for rid, (group, now, final, stopped, fc) in RUNS.items():
        g = c.create_group(f"runs/{rid}")
        g.attrs["group"] = group
        g["loss"] = np.where(np.arange(100) < 25, now, final).astype(np.float32)
        r = f.create_group(f"runs/{rid}")
        r.attrs["stopped"], r.attrs["stop_final"] = stopped, fc

out = subprocess.run([sys.executable, script, forecast, curves, "--json"], capture_output=True,
                     text=True)
hptest.check(out.returncode == 0, "prune-compare runs on the built sweep", out.stderr)
t = json.loads(out.stdout) if out.returncode == 0 else {}
total = 600.0


def expect(rule, stopped_runs, best_kept, regret):
    got = t.get(rule, {})
    saved = 75 * len(stopped_runs) / total
    hptest.check(got.get("stopped") == len(stopped_runs) and abs(got.get("saved", -1) - saved) < 1e-12
                 and got.get("best_kept") == best_kept and abs(got.get("mean_regret", -1) - regret) < 1e-6,
                 f"{rule}: stops {', '.join(stopped_runs) or 'none'}",
                 json.dumps(got))


# hpt stopped c (g1's best: regret log 0.4 - log 0.1), d and f.
expect("hpt", "cdf", False, np.mean([np.log(0.4) - np.log(0.1), 0.0]))
# median of the other runs' levels: a 3 (stays), b 3 (stays), c 2 (stopped), d 2 (stopped); f.
expect("median", "cdf", False, np.mean([np.log(0.4) - np.log(0.1), 0.0]))
expect("top-k", "cdf", False, np.mean([np.log(0.4) - np.log(0.1), 0.0]))
expect("asha", "cdf", False, np.mean([np.log(0.4) - np.log(0.1), 0.0]))
# Ranked by level, g1 must keep a, b and c to hold c; g2 keeps e.
expect("ceiling (level)", "df", True, 0.0)
# Ranked by hpt's forecast, c is first in g1.
expect("ceiling (hpt)", "abdf", True, 0.0)
hptest.finish()
