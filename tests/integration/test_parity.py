"""Parity with the prototype (hybrid.controller = prototype, dynamics.style = rssm_prototype) on the digits-sgd
reference problem: the phases in the trace are exactly what the prototype's controller decides from the
confidence recorded at each decision and the divergence alarms (rebuilt here from its rules: warmup, the
mandatory Full block, predict lengths clamp(floor(floor(15 c^2)(1 - min(0.1 k, 0.5))), 10, 15), Correct blocks of
5, five predict blocks in a row at most, a Full block after an alarm); only Warmup and Full steps make backward
passes; predicted and corrective steps keep the parameters, so the hybrid arm of the comparison equals the freeze
arm; a run killed inside a predict block and restarted gives the same trace; wrong style combinations are
refused with exit 2 before anything is written."""
import math
import os

import numpy as np

import hptest

a = hptest.args()
h5py = hptest.h5()
deck = hptest.deck_path(a.root, "reference/digits-sgd-prototype.ini")
STEPS = 1000
base = ["run.print_every=2000", f"train.steps={STEPS}"]
NAME = "digits-sgd-prototype"
WARMUP, FULL, CORRECT, MAX_PREDICT, BLOCKS, THRESHOLD = 100, 20, 5, 15, 5, 0.85


def trace(out, name=NAME):
    with h5py.File(os.path.join(out, f"{name}_trace.h5"), "r") as f:
        cols = {k: f["steps"][k][()] for k in f["steps"].keys()}
        ev = {k: f["events"][k][()] for k in ("step", "kind", "value")}
    return cols, ev


def expected_phases(cols, ev):
    """The prototype's schedule (controller and step budget) replayed from the recorded decisions' confidence and
    the recorded divergence alarms. Returns phases and predict-block lengths per step."""
    conf = dict(zip(cols["step"].astype(int), cols["confidence"]))
    alarms = {int(s): int(k) for s, k in zip(ev["step"], ev["kind"]) if k in (9, 10)}
    phase, warm_done, had_full, k = 0, False, False, 0
    out_phase, out_len = [], []
    budget, left, length = 0, 0, 0
    for step in range(1, STEPS + 1):
        if left == 0:
            done, c = step - 1, conf.get(step, math.nan)
            if not warm_done and done < WARMUP:
                budget, length = 0, WARMUP - done
            else:
                if not warm_done:
                    warm_done, phase = True, 1
                if phase == 2:
                    phase, budget, length = 3, 3, CORRECT
                elif not had_full:
                    had_full, budget, length = True, 1, FULL
                elif c >= THRESHOLD and k < BLOCKS:
                    phase, k = 2, k + 1
                    n = math.floor(math.floor(MAX_PREDICT * c * c) * (1 - min(0.1 * k, 0.5)))
                    budget, length = 2, min(max(n, 10), MAX_PREDICT)
                else:
                    phase, k, budget, length = 1, 0, 1, FULL
            left = length
        left -= 1
        out_phase.append(budget)
        out_len.append(length if budget == 2 else 0)
        if step in alarms and budget != 0:
            if alarms[step] == 9:
                phase, k = 1, BLOCKS
            budget, left, length = 1, FULL, FULL
    return np.array(out_phase), np.array(out_len)


# 1. The schedule is the prototype's, given its confidence and its alarms.
out = os.path.join(a.work, "basic")
r = hptest.run(a.hpt, deck, *base, f"output.dir={out}")
hptest.check(r.returncode == 0, "parity run exits 0", r.stdout[-500:] + r.stderr[-500:])
cols, ev = trace(out)
phases, lengths = expected_phases(cols, ev)
hptest.check(np.array_equal(cols["phase"], phases), "the phases follow the prototype's controller and budget",
             str(np.nonzero(cols["phase"] != phases)[0][:10]))
pred = cols["phase"] == 2
hptest.check(pred.sum() > 0 and np.array_equal(cols["block_horizon"][pred], lengths[pred]),
             "predict blocks have the prototype's lengths", str(np.unique(cols["block_horizon"][pred])))
starts = ev["step"][ev["kind"] == 6]
hptest.check(len(starts) >= 3 and np.all(np.isfinite(cols["confidence"][starts - 1])),
             "every predict block starts at a decision whose confidence is recorded", str(starts))
hptest.check(np.all(cols["confidence"][starts - 1] >= THRESHOLD), "predict blocks open at confidence >= 0.85")
hptest.check(np.array_equal(cols["backward"] == 1, np.isin(cols["phase"], (0, 1))),
             "exactly the Warmup and Full steps make backward passes")
hptest.check(np.all(np.isfinite(cols["loss"])), "every step measured its minibatch loss (forward passes)")
hptest.check(f"{int((cols['backward'] == 1).sum())} of {STEPS} steps" in r.stdout,
             "the summary counts the backward passes", r.stdout[-1500:])

# 2. The comparison: predicted and corrective steps keep the parameters, so hybrid = freeze exactly.
out = os.path.join(a.work, "compare")
r = hptest.run(a.hpt, deck, *base, f"output.dir={out}", "compare.seeds=1", extra=("--compare",))
hptest.check(r.returncode == 0, "compare of the parity deck exits 0", r.stdout[-800:] + r.stderr[-500:])
with h5py.File(os.path.join(out, f"{NAME}_compare.h5"), "r") as f:
    arms = {k: f["arms"][k] for k in ("full", "hybrid", "budget", "freeze")}
    hyb, frz = arms["hybrid"].attrs["final_val_loss"], arms["freeze"].attrs["final_val_loss"]
    hptest.check(hyb == frz and np.array_equal(arms["hybrid"]["val_loss"][()], arms["freeze"]["val_loss"][()]),
                 "the hybrid arm equals the freeze arm (same minibatches, frozen parameters)", f"{hyb!r} {frz!r}")
    hptest.check(arms["hybrid"].attrs["backward_total"] == arms["budget"].attrs["backward_total"] < STEPS,
                 "budget makes as many backward passes as hybrid")

# 3. Killed inside a predict block at its checkpoint, restarted: the same trace as an uninterrupted run.
ck = hptest.first_step_inside_block(cols)
hptest.check(ck is not None, "the run has a predict block of at least two steps")
hptest.check_restart_equality(a, deck, base, ck or 500, trace, "")

# 4. The parity styles go together: each wrong combination is refused before any work, naming the key.
refusals = [(["dynamics.style=rssm"], "dynamics.style"), (["encoder.style=rich"], "encoder.style"),
            (["gru.reset=after"], "gru.reset"), (["update.style=linear"], "update.style"),
            (["hybrid.controller=hpt"], "dynamics.style"), (["run.mode=forecast"], "dynamics.style")]
for i, (sets, key) in enumerate(refusals):
    out = os.path.join(a.work, f"refused{i}")
    r = hptest.run(a.hpt, deck, *base, f"output.dir={out}", *sets)
    hptest.check(r.returncode == 2 and key in r.stderr and not os.path.exists(out),
                 f"{sets[0]}: exit 2 naming {key}, nothing written", f"rc {r.returncode}: {r.stderr[-300:]}")
hptest.finish()
