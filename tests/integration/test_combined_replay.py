#!/usr/bin/env python3
"""run/post/combined-replay: replayed from a forecast output alone, the combined forecast equals the
one hpt wrote, row for row; the same replay without the clamp of the guards differs (so the check
sees the clamp)."""
import os
import subprocess
import sys
from importlib.machinery import SourceFileLoader

import numpy as np

import hptest

a = hptest.args()
script = os.path.join(a.root, "run/post/combined-replay")
curves = os.path.join(a.root, "tests/data/curves/hpt-sweep.h5")
r = hptest.run(a.hpt, hptest.deck_path(a.root, "forecast.ini"), f"forecast.input={curves}",
               "forecast.horizons=10,50,100", "forecast.every=20", "forecast.ensemble=off",
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
v = subprocess.run([sys.executable, script, "verify", out], capture_output=True, text=True)
hptest.check(v.returncode == 0 and "NaN mismatches 0" in v.stdout, "the verify command runs", v.stdout + v.stderr)
hptest.finish()
