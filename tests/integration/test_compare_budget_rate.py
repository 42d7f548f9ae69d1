"""hpt --compare with compare.budget_lr_factors: every seed trains the budget arm at each factor of the deck's
learning rate, with the hybrid arm's number of backward passes; the comparison keeps the factor whose runs have
the lowest mean final validation loss over the seeds, rebuilt here from the runs' own traces. A single factor
keeps the usual arm names; a bad list ends the run before any work, naming the key. On one process the table has no
communication columns and every arm's communication counters are 0 (docs/mpi.md)."""
import os

import numpy as np

import hptest

a = hptest.args()
h5py = hptest.h5()
deck = hptest.deck_path(a.root, "reference/tuned/digits-sgd.ini")
LR = 0.016  # the deck's optimizer.lr
# Enter a predict block at every decision, so the hybrid arm skips steps and the budget is shorter than full.
verify = ["run.print_every=1000", "predict.confidence=1e6", "predict.min_coverage=0", "predict.min_scored=0",
          "compare.seeds=1,2"]
FACTORS = (0.5, 2.0)


def final_loss(trace):
    v = trace["steps/val_loss"][()]
    return v[np.isfinite(v)][-1]


out = os.path.join(a.work, "scan")
r = hptest.run(a.hpt, deck, *verify, f"output.dir={out}", "compare.budget_lr_factors=0.5, 2", extra=("--compare",))
hptest.check(r.returncode == 0, "compare with two budget rates exits 0", r.stdout[-800:] + r.stderr[-500:])
with h5py.File(os.path.join(out, "digits-sgd_compare.h5"), "r") as f:
    hptest.check(np.array_equal(f["budget_lr_factors"][()], FACTORS), "the factors are recorded",
                 str(f["budget_lr_factors"][()]))
    means = []
    for k, factor in enumerate(FACTORS):
        finals = []
        for seed in (1, 2):
            hybrid_passes = f[f"seeds/{seed}/hybrid"].attrs["backward_total"]
            name = f"digits-sgd_s{seed}_budget_lr{factor:g}_trace.h5"
            with h5py.File(os.path.join(out, name), "r") as t:
                lr, real = t["steps/lr"][()], t["steps/backward"][()]
                hptest.check(np.isclose(lr[0], factor * LR, rtol=1e-12, atol=0),
                             f"{name}: trains at {factor:g} x the deck's rate", f"{lr[0]!r}")
                hptest.check(int(real.sum()) == len(real) == hybrid_passes,
                             f"{name}: every step real, as many as the hybrid arm's backward passes",
                             f"{real.sum()} {len(real)} vs {hybrid_passes}")
                finals.append(final_loss(t))
        means.append(np.mean(finals))
        hptest.check(np.isclose(f["budget_mean_final_val_loss"][k], means[-1], rtol=1e-6, atol=0),
                     f"factor {factor:g}: the mean final validation loss over the seeds",
                     f"{f['budget_mean_final_val_loss'][k]} vs {means[-1]}")
    kept = FACTORS[int(np.argmin(means))]
    hptest.check(f.attrs["budget_lr_factor"] == kept, "the factor with the lowest mean is kept",
                 f"{f.attrs['budget_lr_factor']} vs {kept} (means {means})")
    for seed in (1, 2):
        with h5py.File(os.path.join(out, f"digits-sgd_s{seed}_budget_lr{kept:g}_trace.h5"), "r") as t:
            hptest.check(np.isclose(f[f"seeds/{seed}/budget"].attrs["final_val_loss"], final_loss(t), rtol=1e-6),
                         f"seed {seed}: the budget arm is the run at the kept factor")
hptest.check(f"kept {kept:g}" in r.stdout, "the console names the kept factor", r.stdout[-1500:])

# One factor: the budget arm keeps its usual name and trains at that factor.
out = os.path.join(a.work, "single")
r = hptest.run(a.hpt, deck, *verify, f"output.dir={out}", "compare.seeds=1", "compare.budget_lr_factors=2",
               extra=("--compare",))
hptest.check(r.returncode == 0, "compare with one budget rate exits 0", r.stderr[-500:])
with h5py.File(os.path.join(out, "digits-sgd_s1_budget_trace.h5"), "r") as t:
    hptest.check(np.isclose(t["steps/lr"][0], 2 * LR, rtol=1e-12, atol=0), "one factor: the budget arm's rate")
with h5py.File(os.path.join(out, "digits-sgd_compare.h5"), "r") as f:
    counted = {arm: (int(f[f"arms/{arm}"].attrs["comm_calls"]), int(f[f"arms/{arm}"].attrs["comm_bytes"]))
               for arm in ("full", "hybrid", "budget", "freeze")}
hptest.check(set(counted.values()) == {(0, 0)} and "communicated MB" not in r.stdout,
             "one process: no communication counted, no communication columns", str(counted))

for bad in ("0.5,abc", "0", ""):
    out = os.path.join(a.work, "bad")
    r = hptest.run(a.hpt, deck, *verify, f"output.dir={out}", f"compare.budget_lr_factors={bad}",
                   extra=("--compare",))
    hptest.check(r.returncode == 2 and "compare.budget_lr_factors" in r.stderr and not os.path.exists(out),
                 f"compare.budget_lr_factors = '{bad}': exit 2 naming the key, nothing written",
                 f"rc {r.returncode}: {r.stderr[-300:]}")

hptest.finish()
