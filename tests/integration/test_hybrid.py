"""The hybrid loop on the digits reference problem, shortened: predict blocks happen and every one ends accepted
or rolled back; the trace's columns agree with its events; a deck that makes every predict block fail rolls each
one back, and then the run is exactly the freeze arm of the comparison (the snapshot restores everything); an
injected non-finite loss restores the last snapshot and halves the learning rate for its window; a run killed
inside a predict block and restarted gives the same trace as an uninterrupted run; the probe part
(dataset.probe_fraction) is what verifies blocks when it is set; predict.retry_after lets a run whose blocks
failed try again later; the divergence monitor's thresholds (monitor.*) decide whether a spike is critical, and a
vanishing gradient warns without escalating, naming monitor.grad_vanish; predict.step_scales verifies
the best fraction of a block's motion; predict.momentum_after_accept = zero restarts the momentum after a kept block."""
import os
import struct
import subprocess
import sys

import numpy as np

import hptest

a = hptest.args()
h5py = hptest.h5()
deck = hptest.deck_path(a.root, "reference/digits-sgd.ini")
STEPS = 300
base = hptest.short_hybrid_sets(STEPS)


def trace(out, name="digits-sgd"):
    with h5py.File(os.path.join(out, f"{name}_trace.h5"), "r") as f:
        cols = {k: f["steps"][k][()] for k in f["steps"].keys()}
        ev = {k: f["events"][k][()] for k in ("step", "kind", "value")}
    return cols, ev


# 1. Blocks happen and each ends with a verdict; the columns agree with the events.
out = os.path.join(a.work, "basic")
r = hptest.run(a.hpt, deck, *base, f"output.dir={out}")
hptest.check(r.returncode == 0, "hybrid run exits 0", r.stdout[-500:] + r.stderr[-500:])
cols, ev = trace(out)
kinds = list(ev["kind"])
starts, accepted, rolled = kinds.count(6), kinds.count(7), kinds.count(8)
hptest.check(starts >= 2, "at least two predict blocks were entered", str(kinds))
hptest.check(accepted + rolled == starts or accepted + rolled == starts - 1,
             "every predict block ends accepted or rolled back", f"{starts} {accepted} {rolled}")
predicted = cols["backward"] == 0
hptest.check(np.array_equal(predicted, cols["phase"] == 2), "steps without a backward pass are the predict phase",
             str(np.nonzero(predicted != (cols["phase"] == 2))))
hptest.check(np.all(cols["block_horizon"][predicted] > 0), "predicted steps carry their block's horizon")
hptest.check(np.array_equal(np.nonzero(cols["verdict"] == 1)[0] + 1, ev["step"][ev["kind"] == 7]),
             "accept verdicts in the table match the accept events")
skips = int(predicted.sum())
hptest.check(f"{STEPS - skips} of {STEPS} steps" in r.stdout, "the summary counts the backward passes",
             r.stdout[-1500:])
real = cols["backward"] == 1
hptest.check(np.all(np.isfinite(cols["loss"][real])), "every real step's loss is finite")

# 2. Every block fails (no predicted motion, a tolerance that demands 50 % improvement): all rolled back, and the
# hybrid run equals the freeze arm, which replays its real/skipped pattern with frozen parameters.
out = os.path.join(a.work, "rollback")
r = hptest.run(a.hpt, deck, *base, f"output.dir={out}", "update.style=none", "predict.tol=-0.5",
               "predict.probe_every=end", "compare.seeds=1", extra=("--compare",))
hptest.check(r.returncode == 0, "compare with always-failing blocks exits 0", r.stdout[-800:] + r.stderr[-500:])
cols, ev = trace(out, "digits-sgd_s1_hybrid")
kinds = list(ev["kind"])
hptest.check(kinds.count(6) >= 2 and kinds.count(7) == 0 and kinds.count(8) >= kinds.count(6) - 1,
             "every predict block was rolled back", str(kinds))
with h5py.File(os.path.join(out, "digits-sgd_compare.h5"), "r") as f:
    hptest.check(f.attrs["hpt_kind"] == "compare", "the comparison file is of kind compare")
    arms = {k: f["arms"][k] for k in ("full", "hybrid", "budget", "freeze")}
    hyb, frz, full, bud = (arms[k].attrs["final_val_loss"] for k in ("hybrid", "freeze", "full", "budget"))
    hb, fb = arms["hybrid"].attrs["backward_total"], arms["freeze"].attrs["backward_total"]
    hptest.check(hb == fb == arms["budget"].attrs["backward_total"] and hb < STEPS,
                 "hybrid, freeze and budget make the same number of backward passes", f"{hb} {fb}")
    hptest.check(arms["full"].attrs["backward_total"] == STEPS, "full makes one per step")
    hptest.check(hyb == frz, "rolled-back blocks leave exactly the freeze arm's state", f"{hyb!r} vs {frz!r}")
    hptest.check(np.array_equal(arms["hybrid"]["val_loss"][()], arms["freeze"]["val_loss"][()]),
                 "the hybrid and freeze validation curves are identical")

    # Wall time to the loss an arm and full both reach, rebuilt from the curves: the first crossing
    # of the higher final loss, interpolated linearly in time.
    def first_time(g, loss):
        s, v = g["seconds"][()], g["val_loss"][()]
        for i in range(len(v)):
            if v[i] <= loss:
                return s[i] if i == 0 else s[i - 1] + (v[i - 1] - loss) / (v[i - 1] - v[i]) * (s[i] - s[i - 1])
        return float("nan")
    for k, g in arms.items():
        sec = g["seconds"][()]
        hptest.check(np.all(np.diff(sec) > 0) and sec[-1] <= g.attrs["wall_seconds"],
                     f"{k}: validation times increase and end within the run's wall time", str(sec))
        common = max(g.attrs["final_val_loss"], full)
        hptest.check(g.attrs["common_val_loss"] == common, f"{k}: common loss is the higher final loss")
        for attr, src in (("seconds_to_common_loss", g), ("full_seconds_to_common_loss", arms["full"])):
            hptest.check(np.isclose(g.attrs[attr], first_time(src, common), rtol=1e-12, atol=0),
                         f"{k}: {attr} is the first crossing of the common loss",
                         f"{g.attrs[attr]} vs {first_time(src, common)}")

# The comparison of a real run plots (validation loss against backward passes, 1000 x 600 px).
png = os.path.join(out, "compare.png")
p = subprocess.run([sys.executable, os.path.join(a.root, "run/post/hpt-plot"),
                    os.path.join(out, "digits-sgd_compare.h5"), "-o", png], capture_output=True, text=True)
size = struct.unpack(">II", open(png, "rb").read(24)[16:24]) if os.path.exists(png) else None
hptest.check(p.returncode == 0 and size == (1000, 600), "run/post/hpt-plot draws the comparison",
             f"rc {p.returncode} size {size}: {p.stderr[-300:]}")

# The markdown summary labels the comparison from the deck stored in it: update none, gate verify (every decision
# may enter), one seed, no saving.
p = subprocess.run([sys.executable, os.path.join(a.root, "run/post/hybrid-table"),
                    os.path.join(out, "digits-sgd_compare.h5")], capture_output=True, text=True)
row = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
hptest.check(p.returncode == 0 and row.startswith("| digits-sgd | none | verify | 1 |") and row.endswith("| 0/1 |"),
             "run/post/hybrid-table labels the comparison from its stored deck", f"rc {p.returncode}: {row} {p.stderr}")

# 3. A non-finite loss at step 150: the last snapshot is restored, the learning rate halved for 50 steps.
out = os.path.join(a.work, "fault")
ref = os.path.join(a.work, "fault_ref")
r = hptest.run(a.hpt, deck, *base, f"output.dir={out}", "hybrid.full_steps=20", "predict.confidence=0",
               env={"HPT_FAULT_AT": "non_finite_loss:150"})
hptest.check(r.returncode == 0 and "divergence critical at step 150" in r.stdout,
             "an injected non-finite loss is recovered from", r.stdout[-800:] + r.stderr[-500:])
r2 = hptest.run(a.hpt, deck, *base, f"output.dir={ref}", "hybrid.full_steps=20", "predict.confidence=0")
cols, ev = trace(out)
rcols, _ = trace(ref)
hptest.check(list(ev["kind"]).count(10) == 1 and ev["step"][list(ev["kind"]).index(10)] == 150,
             "one divergence-critical event at step 150")
i = 150  # row of step 151
hptest.check(np.allclose(cols["lr"][i:i + 50], 0.5 * rcols["lr"][i:i + 50], rtol=1e-12) and
             np.allclose(cols["lr"][i + 50:], rcols["lr"][i + 50:], rtol=1e-12),
             "learning rate halved for steps 151..200, then back to the schedule")
hptest.check(cols["backward"][149] == 0 and np.isnan(cols["loss"][149]), "the failed step kept no update")
with h5py.File(os.path.join(out, f"digits-sgd_ckpt_{STEPS:010d}.h5"), "r") as f:
    hptest.check(np.all(np.isfinite(f["model/parameters"][()])), "the final checkpoint is finite")

# 4. Killed inside a predict block at its checkpoint, restarted: the same trace as an uninterrupted run. The first
# run finds a step inside a predict block (the forecaster decides where blocks fall). Also with the linear and
# quadratic predictors' anchors, whose newest-parameters buffer is part of the state, with trend's two EMAs and with
# dmd's ring of anchors.
def restart_inside_block(tag, *sets):
    sets = base + ["predict.max_horizon=50"] + list(sets)
    where = tag.split(":")[0]
    probe = os.path.join(a.work, f"find_block{where}")
    hptest.run(a.hpt, deck, *sets, f"output.dir={probe}")
    pcols, _ = trace(probe)
    ck = hptest.first_step_inside_block(pcols)
    hptest.check(ck is not None, f"{tag}the run has a predict block of at least two steps", str(pcols["phase"]))
    ck = ck or 75
    scols = hptest.check_restart_equality(a, deck, sets, ck, trace, where, tag)
    hptest.check(scols["phase"][ck - 1] == 2 and scols["phase"][ck] == 2, f"{tag}step {ck} is inside a predict block",
                 str(scols["phase"][ck - 5:ck + 5]))


restart_inside_block("")
restart_inside_block("anchors: ", "update.snapshots=anchors", "update.lag=5")
restart_inside_block("quadratic-anchors: ", "update.style=quadratic", "update.snapshots=anchors", "update.lag=5")
restart_inside_block("trend: ", "update.style=trend", "update.lag=5")
restart_inside_block("dmd: ", "update.style=dmd", "update.lag=3", "update.dmd_anchors=5", "update.dmd_rank=2")
# The learned forecaster (train.forecast_style = learned): its ring of step losses is part of the state. (Its
# forecasts read the planned schedule to the last step, so unlike the RSSM's they change with train.steps: the
# restart test that extends a run's train.steps does not apply to it.)
restart_inside_block("learned: ", "train.forecast_style=learned", "update.style=trend", "update.lag=5",
                     "predict.confidence=1e6")

# 5. --compare refuses a deck that is not hybrid, before any work and without writing anything; anchors are for
# the finite-difference predictors only; trend needs a time constant of at least 2 steps.
out = os.path.join(a.work, "refused")
r = hptest.run(a.hpt, deck, *base, f"output.dir={out}", "train.hybrid=off", extra=("--compare",))
hptest.check(r.returncode == 2 and "train.hybrid" in r.stderr and not os.path.exists(out),
             "--compare of a deck with train.hybrid = off: exit 2 naming the key, nothing written",
             f"rc {r.returncode}: {r.stderr[-300:]}")
out = os.path.join(a.work, "refused_anchors")
r = hptest.run(a.hpt, deck, *base, f"output.dir={out}", "update.style=extrapolate", "update.snapshots=anchors")
hptest.check(r.returncode == 2 and "update.snapshots" in r.stderr and not os.path.exists(out),
             "update.snapshots = anchors with extrapolate: exit 2 naming the key, nothing written",
             f"rc {r.returncode}: {r.stderr[-300:]}")
out = os.path.join(a.work, "refused_trend_lag")
r = hptest.run(a.hpt, deck, *base, f"output.dir={out}", "update.style=trend", "update.lag=1")
hptest.check(r.returncode == 2 and "update.lag = 1" in r.stderr and not os.path.exists(out),
             "update.style = trend with update.lag = 1: exit 2 naming the key, nothing written",
             f"rc {r.returncode}: {r.stderr[-300:]}")
out = os.path.join(a.work, "refused_dmd_rank")
r = hptest.run(a.hpt, deck, *base, f"output.dir={out}", "update.style=dmd", "update.dmd_anchors=5",
               "update.dmd_rank=4")
hptest.check(r.returncode == 2 and "update.dmd_rank = 4" in r.stderr and not os.path.exists(out),
             "update.style = dmd with a rank above dmd_anchors - 2: exit 2 naming the key, nothing written",
             f"rc {r.returncode}: {r.stderr[-300:]}")
# 6. A probe part held out from training and validation verifies the blocks: with no validation rows at all the
# verdicts still carry finite probe-loss ratios and blocks are kept; without a probe part the same run has nothing to
# verify on, so every block is rolled back with a NaN ratio.
for fraction, verified in (("0.2", True), ("0", False)):
    out = os.path.join(a.work, "probe_part_" + fraction)
    r = hptest.run(a.hpt, deck, *base, f"output.dir={out}", "dataset.val_fraction=0",
                   f"dataset.probe_fraction={fraction}")
    hptest.check(r.returncode == 0, f"probe_fraction {fraction}: exit 0", r.stderr[-300:])
    _, ev = trace(out)
    ratios = ev["value"][np.isin(ev["kind"], (7, 8))]
    hptest.check(len(ratios) >= 2, f"probe_fraction {fraction}: blocks were verified", str(ev["kind"]))
    if verified:
        hptest.check("validation 0, probe 359" in r.stdout, "the data set line counts the probe rows",
                     r.stdout[-3000:])
        hptest.check(np.all(np.isfinite(ratios)) and np.any(ev["kind"] == 7),
                     "probe part: finite ratios, blocks kept", str(ratios))
    else:
        hptest.check(np.all(np.isnan(ratios)) and not np.any(ev["kind"] == 7),
                     "no probe part and no validation rows: every block rolled back", str(ratios))

# 7. predict.retry_after: with every block failing, a run without it enters no block once rollbacks have halved
# the horizon cap below the shortest forecast horizon; with it the cap comes back after that many real steps
# without a rollback, so blocks start again later in the run (at the shortest horizon first).
starts = {}
for retry in (0, 40):
    out = os.path.join(a.work, f"retry_{retry}")
    r = hptest.run(a.hpt, deck, *base, f"output.dir={out}", "update.style=none", "predict.tol=-0.5",
                   f"predict.retry_after={retry}")
    hptest.check(r.returncode == 0, f"retry_after {retry}: exit 0", r.stderr[-300:])
    _, ev = trace(out)
    starts[retry] = list(zip(ev["step"][ev["kind"] == 6], ev["value"][ev["kind"] == 6]))
    hptest.check(not np.any(ev["kind"] == 7), f"retry_after {retry}: every block rolled back", str(ev["kind"]))
last = starts[0][-1][0]
later = [(s, h) for s, h in starts[40] if s > last]
hptest.check(len(starts[40]) > len(starts[0]) and len(later) >= 1,
             "with retry_after, blocks start again after the last one of the run without it", str(starts))
hptest.check(all(h == 10 for _, h in later), "a retry starts at the shortest horizon", str(later))


# 8. The monitor's thresholds: a step whose loss and gradient norm look 10^4 times larger (injected) is critical at
# the defaults; with monitor.sigma raised, the gradient still is; with monitor.grad_explode raised too, nothing is.
def spike_run(tag, *sets):
    out = os.path.join(a.work, f"spike_{tag}")
    r = hptest.run(a.hpt, deck, *base, f"output.dir={out}", "predict.confidence=0", *sets,
                   env={"HPT_FAULT_AT": "signal_spike:150"})
    hptest.check(r.returncode == 0, f"spike run {tag} exits 0", r.stdout[-500:] + r.stderr[-500:])
    _, ev = trace(out)
    return [(int(s), r.stdout) for s, k in zip(ev["step"], ev["kind"]) if k == 10]

crit = spike_run("default")
hptest.check([s for s, _ in crit] == [150] and "loss deviates" in crit[0][1],
             "at the default thresholds the spike is critical, for its loss", str(crit)[:500])
crit = spike_run("sigma", "monitor.sigma=1e9")
hptest.check([s for s, _ in crit] == [150] and "gradient norm explodes" in crit[0][1],
             "with monitor.sigma = 1e9 the spike is critical for its gradient", str(crit)[:500])
crit = spike_run("both", "monitor.sigma=1e9", "monitor.grad_explode=1e6")
hptest.check(crit == [], "with monitor.grad_explode = 1e6 too, nothing is critical", str(crit)[:500])

# 8b. A vanishing gradient warns without escalating, and the console names the key that turns the check off: with
# monitor.grad_vanish = 1 every gradient below its early level warns, which training soon shows.
out = os.path.join(a.work, "vanish")
r = hptest.run(a.hpt, deck, *base, f"output.dir={out}", "monitor.grad_vanish=1")
hptest.check(r.returncode == 0, "vanishing-gradient run exits 0", r.stdout[-500:] + r.stderr[-500:])
_, ev = trace(out)
kinds = list(ev["kind"])
hptest.check(kinds.count(9) > 0 and kinds.count(10) == 0, "vanishing gradients warn and never become critical",
             str(kinds)[:500])
hptest.check("(gradient norm vanishes;" in r.stdout and "monitor.grad_vanish = 0 turns this check off" in r.stdout,
             "the console's warning names the vanishing gradient and monitor.grad_vanish", r.stdout[-1500:])
r = hptest.run(a.hpt, deck, *base, f"output.dir={out}_off", "monitor.grad_vanish=0")
hptest.check(r.returncode == 0 and "turns this check off" not in r.stdout and "vanishes" not in r.stdout,
             "with monitor.grad_vanish = 0 no vanishing gradient is reported", r.stdout[-1500:])


# 9. predict.step_scales: at the end of a block the parameters are moved to start + a (end - start) for each scale a,
# and the one with the lowest probe loss is verified. With a = 1e-6 alone the block barely moves, so every verdict's
# ratio is 1 to float precision (unscaled extrapolate blocks move the probe loss by 0.1-10 %); with several scales the
# first block's ratio is at most that of the unscaled run (its minimum includes a = 1, and the runs agree until then).
def verdicts(tag, scales):
    out = os.path.join(a.work, f"scales_{tag}")
    r = hptest.run(a.hpt, deck, *base, f"output.dir={out}", "update.style=extrapolate",
                   f"predict.step_scales={scales}")
    hptest.check(r.returncode == 0, f"step_scales {scales}: exit 0", r.stdout[-500:] + r.stderr[-500:])
    _, ev = trace(out)
    k = ev["kind"]
    return ev["value"][(k == 7) | (k == 8)], ev["value"][k == 11]

plain, plain_scales = verdicts("one", "1")
hptest.check(len(plain) >= 2 and len(plain_scales) == 0 and np.max(np.abs(plain - 1)) > 1e-3,
             "unscaled blocks move the probe loss, and record no scale", str(plain))
tiny, tiny_scales = verdicts("tiny", "1e-6")
hptest.check(len(tiny) >= 2 and np.all(np.abs(tiny - 1) < 1e-5) and len(tiny_scales) == len(tiny)
             and np.all(tiny_scales == 1e-6), "step_scales 1e-6: every block ends where it started", str(tiny))
several, chosen = verdicts("several", "3,1,0.5")
hptest.check(len(chosen) == len(several) and set(chosen) <= {3.0, 1.0, 0.5} and several[0] <= plain[0] + 1e-7,
             "step_scales 3,1,0.5: a listed scale is kept and the first ratio is at most the unscaled one",
             f"{several} {chosen} vs {plain}")
out = os.path.join(a.work, "scales_refused")
r = hptest.run(a.hpt, deck, *base, f"output.dir={out}", "predict.step_scales=0.5,0")
hptest.check(r.returncode == 2 and "predict.step_scales" in r.stderr and not os.path.exists(out),
             "predict.step_scales with a zero: exit 2 naming the key, nothing written", r.stderr[-300:])

# 10. predict.momentum_after_accept = zero: after a kept block the first real step starts SGD's momentum from its own
# gradient, so its update is exactly lr x the gradient (no clipping or weight decay in this deck), which with the
# momentum kept it is several times that; until the first kept block the run is the default one step for step. The
# update norm is a difference of float parameters, so late in the schedule it carries a relative error of ~1e-3.
def momentum_run(tag, *sets):
    out = os.path.join(a.work, f"momentum_{tag}")
    r = hptest.run(a.hpt, deck, *base, f"output.dir={out}", *sets)
    hptest.check(r.returncode == 0, f"momentum {tag}: exit 0", r.stdout[-500:] + r.stderr[-500:])
    cols, ev = trace(out)
    after = ev["step"][ev["kind"] == 7]  # the step after each kept block (0-based index = the block's last step)
    after = after[after < STEPS]
    after = after[cols["backward"][after] == 1]
    return cols, after, cols["update_norm"][after] / (cols["lr"][after] * cols["grad_norm"][after])


keep_cols, keep_after, keep_ratio = momentum_run("keep")
zero_cols, zero_after, zero_ratio = momentum_run("zero", "predict.momentum_after_accept=zero")
hptest.check(len(zero_after) >= 1 and np.all(np.abs(zero_ratio - 1) < 1e-2),
             "momentum zeroed after a kept block: the next update is lr x gradient", f"{zero_after} {zero_ratio}")
hptest.check(len(keep_after) >= 1 and np.all(keep_ratio > 2),
             "momentum kept: the update after a kept block is not lr x gradient", f"{keep_after} {keep_ratio}")
first = int(zero_after[0]) if len(zero_after) else 0
hptest.check(first > 0 and np.array_equal(keep_cols["loss"][:first], zero_cols["loss"][:first])
             and not np.array_equal(keep_cols["loss"][first:], zero_cols["loss"][first:]),
             "the two runs agree until the first kept block and differ after it", str(first))
restart_inside_block("zero momentum: ", "predict.momentum_after_accept=zero")

hptest.finish()
