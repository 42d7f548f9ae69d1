#!/usr/bin/env python3
"""run/post/kept-blocks: on traces built here with a known loss ratio after a kept block it reports exactly that
ratio's change; on a real comparison it counts the kept blocks hpt recorded; bad input ends with exit 2."""
import math
import os
import subprocess
import sys

import h5py
import numpy as np

import hptest

a = hptest.args()
script = os.path.join(a.root, "run/post/kept-blocks")


def kept_blocks(*argv):
    return subprocess.run([sys.executable, script, *argv], capture_output=True, text=True)


def cells(stdout):
    """The last table row's cells."""
    return [c.strip() for c in stdout.strip().splitlines()[-1].strip("|").split("|")]


# 1. Synthetic comparison, one seed. Steps 0-9 real, 10-14 a kept block (verdict +1 at 14), 15-19 real, 20-22 a
# rolled-back block, 23-29 real. freeze's loss is 1 everywhere; hybrid's over freeze's is e^1 on steps 0-4 (outside
# the 5-step baseline), e^0.05 on 5-9, e^-0.1 on 15-16 and 1 elsewhere. So d(0) = d(1) = -0.15, d(2..4) = -0.05
# and d(5), d(8) have no block: the real steps after the block stop at the next skipped step 20.
syn = os.path.join(a.work, "syn")
os.makedirs(syn)
n = 30
backward = np.ones(n, dtype=np.int64)
backward[10:15] = 0
backward[20:23] = 0
verdict = np.zeros(n, dtype=np.int64)
verdict[14], verdict[22] = 1, -1
log_ratio = np.zeros(n)
log_ratio[0:5], log_ratio[5:10], log_ratio[15:17] = 1.0, 0.05, -0.1
for arm, loss in (("hybrid", 2.0 * np.exp(log_ratio)), ("freeze", np.full(n, 2.0))):
    with h5py.File(os.path.join(syn, f"syn_s7_{arm}_trace.h5"), "w") as f:
        f.attrs["hpt_kind"] = "trace"
        f["steps/loss"], f["steps/backward"], f["steps/verdict"] = loss, backward, verdict
with h5py.File(os.path.join(syn, "syn_compare.h5"), "w") as f:
    f.attrs["hpt_kind"] = "compare"
    f.create_group("seeds/7/hybrid")
p = kept_blocks(os.path.join(syn, "syn_compare.h5"), "--steps", "0,1,2,4,5,8")
c = cells(p.stdout) if p.returncode == 0 else []
expect = [-0.15, -0.15, -0.05, -0.05]
values = [float(x.split()[0]) for x in c[3:7]] if len(c) == 9 else []
hptest.check(len(c) == 9 and c[1] == "1" and c[2] == "1" and c[7] == c[8] == "–" and
             all(math.isclose(v, e, abs_tol=1e-4) for v, e in zip(values, expect)) and
             all(x.endswith("(1)") for x in c[3:7]),
             "kept-blocks: the known ratio change after a kept block, counted up to the next skipped step",
             f"rc {p.returncode}: {c} {p.stderr}")

# 2. A real comparison (the quickstart deck keeps a few blocks): the count of kept blocks is hpt's own counter.
out = os.path.join(a.work, "compare")
r = hptest.run(a.hpt, os.path.join(a.root, "inputs/digits.ini"), f"output.dir={out}", extra=("--compare",))
hptest.check(r.returncode == 0, "compare of the quickstart deck", r.stdout[-800:] + r.stderr[-500:])
path = os.path.join(out, "digits_compare.h5")
if r.returncode == 0:
    with h5py.File(path, "r") as f:
        accepted = int(f["seeds/1/hybrid"].attrs["blocks_accepted"])
    p = kept_blocks(path)
    c = cells(p.stdout) if p.returncode == 0 else []
    hptest.check(accepted > 0 and len(c) > 3 and c[2] == str(accepted),
                 "kept-blocks counts the blocks the hybrid arm accepted", f"accepted {accepted}: {c} {p.stderr}")

# 3. Bad input: a file that is not a comparison, a missing trace, a bad --steps; exit 2 naming it.
trace = os.path.join(syn, "syn_s7_hybrid_trace.h5")
p = kept_blocks(trace)
hptest.check(p.returncode == 2 and trace in p.stderr and "comparison" in p.stderr,
             "kept-blocks refuses a trace given as a comparison", p.stderr)
os.remove(os.path.join(syn, "syn_s7_freeze_trace.h5"))
p = kept_blocks(os.path.join(syn, "syn_compare.h5"))
hptest.check(p.returncode == 2 and "seed 7" in p.stderr and "freeze" in p.stderr,
             "kept-blocks names the seed whose freeze trace is missing", p.stderr)
p = kept_blocks(os.path.join(syn, "syn_compare.h5"), "--steps", "1,x")
hptest.check(p.returncode == 2 and "--steps" in p.stderr, "kept-blocks refuses --steps 1,x", p.stderr)

hptest.finish()
