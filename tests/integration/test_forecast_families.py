#!/usr/bin/env python3
"""run/post/forecast-families: on forecast files built here with known errors, a family's ratio is
its mean |error| over the best simple forecaster's on the same rows, and with two corpora a
family's rows of both are pooled (not their ratios averaged)."""
import os
import re
import subprocess
import sys

import h5py
import numpy as np

import hptest

a = hptest.args()
script = os.path.join(a.root, "run/post/forecast-families")
SIMPLE = ("last", "loglin", "power", "law")


def corpus(tag, errors):
    """A curve file and a forecast file of one family `p/o/s` with two runs at horizon 10; errors:
    {forecaster: |error| of each of the 4 rows} (2 rows per run)."""
    curves, forecast = (os.path.join(a.work, f"{n}-{tag}.h5") for n in ("curves", "forecast"))
    with h5py.File(curves, "w") as c, h5py.File(forecast, "w") as f:
        for i in range(2):
            g = c.create_group(f"runs/r{i}")
            g.attrs["problem"], g.attrs["optimizer"], g.attrs["schedule"] = "p", "o", "s"
            f.create_group(f"runs/r{i}").attrs["index"] = i
        f["forecasts/run"] = np.array([0, 0, 1, 1])
        f["forecasts/horizon"] = np.full(4, 10)
        f["forecasts/error"] = np.full(4, np.nan)  # the ensemble off
        for name, e in errors.items():
            f[f"baselines/{name}/error"] = np.array(e, float)
            f[f"baselines/{name}/q05"] = np.zeros(4)
            f[f"baselines/{name}/q95"] = np.ones(4)
    return [forecast, curves]


def ratio_of(out, name):
    m = re.search(rf"^{name}: mean of family ratios [0-9.]+, worst family p/o/s \(([0-9.]+)\)",
                  out, re.M)
    return float(m.group(1)) if m else None


flat = {n: [1.0] * 4 for n in SIMPLE}
one = corpus("one", dict(flat, last=[0.2, 0.2, 0.2, 0.2], learned=[0.1, 0.1, 0.3, 0.3],
                         combined=[0.2] * 4))
two = corpus("two", dict(flat, last=[0.6] * 4, learned=[0.3] * 4, combined=[0.3] * 4))

out = subprocess.run([sys.executable, script] + one, capture_output=True, text=True)
hptest.check(out.returncode == 0, "one corpus is scored", out.stderr)
hptest.check(ratio_of(out.stdout, "learned") == 1.0 and ratio_of(out.stdout, "combined") == 1.0,
             "one corpus: learned 0.2 / last 0.2 and combined 0.2 / last 0.2", out.stdout)

out = subprocess.run([sys.executable, script] + one + two, capture_output=True, text=True)
hptest.check(out.returncode == 0, "two corpora are scored", out.stderr)
# Pooled rows: learned mean (0.8 + 1.2) / 8 = 0.25, last (0.8 + 2.4) / 8 = 0.4 -> 0.625; the
# mean of the two corpora's ratios would be (1.0 + 0.5) / 2 = 0.75.
hptest.check(ratio_of(out.stdout, "learned") == 0.625, "two corpora: the family's rows are pooled",
             out.stdout)
hptest.check("8 scored forecasts, 1 families, 2 corpora pooled" in out.stdout,
             "the header counts the pooled rows and corpora", out.stdout)

out = subprocess.run([sys.executable, script] + one + [two[0]], capture_output=True, text=True)
hptest.check(out.returncode != 0 and "pairs" in out.stderr, "an odd number of files is refused",
             out.stderr)
hptest.finish()
