#!/usr/bin/env python3
"""run/post/coverage: on traces built here with known scored forecasts it reports exactly their coverage and the
split by scores known at issue; on a real training run its counts and coverage are those hpt printed, and the
forecasts it counts as issued before any score of their horizon carry the calibration's starting width factor 1;
bad input ends with exit 2."""
import math
import os
import re
import subprocess
import sys

import h5py
import numpy as np

import hptest

a = hptest.args()
script = os.path.join(a.root, "run/post/coverage")


def coverage(*argv):
    return subprocess.run([sys.executable, script, *argv], capture_output=True, text=True)


def rows(stdout):
    """{horizon: cells} of the table."""
    out = {}
    for line in stdout.strip().splitlines()[2:]:
        c = [x.strip() for x in line.strip().strip("|").split("|")]
        out[int(c[0])] = c
    return out


def write_trace(path, origin, horizon, resolved, inside):
    with h5py.File(path, "w") as f:
        f.attrs["hpt_kind"] = "trace"
        for name, v in (("origin", origin), ("horizon", horizon), ("resolved", resolved), ("inside", inside)):
            f[f"forecasts/{name}"] = np.asarray(v, dtype=np.int64)


# 1. Two synthetic runs of one horizon (10), forecasts every 10 steps from step 0, each scored 20 steps later, so
# the forecast made at 10 j was issued with max(0, j - 1) scores known (the one scored at its own step counts).
# Run A: 12 forecasts, misses at j = 0, 1 (issued with 0 known) and 11 (10 known): coverage 9/12. Run B: 6
# forecasts, a miss at j = 5: 5/6. With --known 3: issued with < 3 known are j = 0..3 of both runs (8 forecasts,
# 2 misses), the rest 10 forecasts with 2 misses.
syn = os.path.join(a.work, "syn")
os.makedirs(syn)
j = np.arange(12)
ia = np.ones(12)
ia[[0, 1, 11]] = 0
write_trace(os.path.join(syn, "a_trace.h5"), 10 * j, np.full(12, 10), 10 * j + 20, ia)
ib = np.ones(6)
ib[5] = 0
write_trace(os.path.join(syn, "b_trace.h5"), 10 * j[:6], np.full(6, 10), 10 * j[:6] + 20, ib)
p = coverage(os.path.join(syn, "a_trace.h5"), os.path.join(syn, "b_trace.h5"), "--known", "3")
c = rows(p.stdout).get(10, []) if p.returncode == 0 else []
expect = ["10", "2", "6–12", f"{(9 / 12 + 5 / 6) / 2:.3f}", f"{9 / 12:.3f}–{5 / 6:.3f}", f"{8 / 18:.3f}",
          f"{6 / 8:.3f}", f"{8 / 10:.3f}"]
hptest.check(c == expect, "coverage: the known coverage of two runs, split by scores known at issue",
             f"rc {p.returncode}: {c} expected {expect} {p.stderr}")

# 2. A real training run with the forecaster: per horizon, the forecasts scored and the coverage hpt printed; every
# forecast issued before a score of its horizon was known has width factor 1 (the calibration's start) and one of
# the others does not.
out = os.path.join(a.work, "train")
r = hptest.run(a.hpt, hptest.deck_path(a.root, "xor.ini"), f"output.dir={out}", "train.steps=400",
               "train.forecaster=true", "forecast.horizons=10,30", "dynamics.members=2", "dynamics.hidden=16",
               "dynamics.stochastic=4", "forecast.scenarios=8", "forecast.every=10", cwd=a.root)
hptest.check(r.returncode == 0, "train run with the forecaster", r.stdout[-800:] + r.stderr[-500:])
trace = os.path.join(out, "xor_trace.h5")
if r.returncode == 0:
    printed = {int(m[1]): (int(m[2]), float(m[3])) for m in
               re.finditer(r"^\s+(\d+)\s+(\d+)\s+\S+\s+([0-9.]+)\s*$", r.stdout, re.M)}
    p = coverage(trace, "--known", "1")
    got = rows(p.stdout) if p.returncode == 0 else {}
    same = sorted(printed) == sorted(got) == [10, 30] and all(
        got[h][2] == f"{printed[h][0]}–{printed[h][0]}" and math.isclose(float(got[h][3]), printed[h][1],
                                                                          abs_tol=6e-4) for h in printed)
    hptest.check(same, "coverage: scored forecasts and coverage per horizon as hpt printed them",
                 f"printed {printed}, table {got} {p.stderr}")
    with h5py.File(trace, "r") as f:
        t = {k: f["forecasts"][k][...] for k in ("origin", "horizon", "resolved", "width_factor")}
    cold_ones, warm_differs = True, False
    for h in (10, 30):
        sel = t["horizon"] == h
        known = np.searchsorted(np.sort(t["resolved"][sel]), t["origin"][sel], side="right")
        cold_ones &= bool(np.all(t["width_factor"][sel][known == 0] == 1.0)) and bool(np.any(known == 0))
        warm_differs |= bool(np.any(t["width_factor"][sel][known > 0] != 1.0))
    hptest.check(cold_ones and warm_differs,
                 "forecasts counted as issued with no score known carry width factor 1, later ones do not",
                 f"{cold_ones} {warm_differs}")

# 3. Bad input: a file that is not a trace, a trace without /forecasts, a bad --known; exit 2 naming it.
cmp = os.path.join(syn, "x_compare.h5")
with h5py.File(cmp, "w") as f:
    f.attrs["hpt_kind"] = "compare"
p = coverage(cmp)
hptest.check(p.returncode == 2 and cmp in p.stderr and "trace" in p.stderr, "coverage refuses a comparison file",
             p.stderr)
bare = os.path.join(syn, "bare_trace.h5")
with h5py.File(bare, "w") as f:
    f.attrs["hpt_kind"] = "trace"
    f["steps/step"] = np.arange(3)
p = coverage(bare)
hptest.check(p.returncode == 2 and bare in p.stderr and "/forecasts" in p.stderr,
             "coverage names a trace without scored forecasts", p.stderr)
p = coverage(os.path.join(syn, "a_trace.h5"), "--known", "0")
hptest.check(p.returncode == 2 and "--known" in p.stderr, "coverage refuses --known 0", p.stderr)

hptest.finish()
