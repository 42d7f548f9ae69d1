"""run.mode = forecast end to end: the small learning-rate sweep (run/sweep --small) made with the
hpt binary, forecast from its HDF5 and CSV curve files (the same forecasts), the output file's
structure and scores, and malformed inputs refused with exit 2, a message naming file, run and
line/dataset, and nothing written."""
import math
import os
import subprocess
import sys

import numpy as np

from hptest import args, check, deck_path, finish, h5, run

a = args()
deck = deck_path(a.root, "forecast.ini")
sweep = os.path.join(a.work, "sweep")
p = subprocess.run([sys.executable, os.path.join(a.root, "run", "sweep"), "--small", "--hpt",
                    a.hpt, "--out", sweep], capture_output=True, text=True, timeout=600)
check(p.returncode == 0, "run/sweep --small succeeds", p.stdout + p.stderr)
check("(diverged)" in p.stdout, "the small sweep has a diverged run", p.stdout)
small = ["forecast.horizons=10,50,100", "forecast.every=10", "forecast.scenarios=8",
         "dynamics.members=2", "dynamics.hidden=16", "dynamics.stochastic=4"]

outputs, stdout = {}, {}
for kind, threads in (("h5", 2), ("csv", 2), ("h5_1thread", 1)):
    out = os.path.join(a.work, "out_" + kind)
    r = run(a.hpt, deck, f"forecast.input={sweep}/curves.{kind.split('_')[0]}", f"output.dir={out}",
            "output.name=fc", f"run.threads={threads}", *small)
    check(r.returncode == 0, f"forecast from {kind} succeeds", r.stdout[-3000:] + r.stderr)
    check("mean |error| log L" in r.stdout and "run-steps/s" in r.stdout and "stop list" in r.stdout,
          f"{kind}: console summary, stop list and throughput printed", r.stdout[-3000:])
    outputs[kind] = os.path.join(out, "fc.h5")
    stdout[kind] = r.stdout


def floored_at_origin_median(origin, hz, q50, raw_lo, raw_hi):
    """The raw intervals with each half raised to the median of the positive half-widths of the raw
    intervals made at the same origin and horizon (the combined forecast's, a sweep's shared floor)."""
    lo, hi = raw_lo.copy(), raw_hi.copy()
    for key in set(zip(origin.tolist(), hz.tolist())):
        rows = (origin == key[0]) & (hz == key[1])
        halves = np.concatenate([q50[rows] - raw_lo[rows], raw_hi[rows] - q50[rows]])
        halves = halves[np.isfinite(halves) & (halves > 0)]
        floor = float(np.median(halves)) if halves.size else 0.0
        lo[rows] = np.minimum(raw_lo[rows], q50[rows] - floor)
        hi[rows] = np.maximum(raw_hi[rows], q50[rows] + floor)
    return lo, hi


def rebuilt_calibration_error(origin, hz, known, target, inside, q50, raw_lo, raw_hi, q05, q95):
    """The largest deviation of the stored calibrated intervals (q05, q95) from the quantile rule
    written out here: each step's newly known targets of a horizon move the level once by their miss
    fraction (gamma 0.05, window 200), the factor is the named order statistic of the scores (at
    least 1 while fewer than 9 scores are known; a miss on a side without width leaves no score),
    and an origin's intervals use the state after that step's targets."""
    level = {h: 0.10 for h in (10, 50, 100)}
    scores = {h: [] for h in (10, 50, 100)}

    def factor(h):
        s = sorted(x for x in scores[h][-200:] if not math.isnan(x))
        if not s:
            return 1.0
        rank = min(max(int(np.ceil((len(s) + 1) * (1 - level[h]) - 1e-9)), 1), len(s))
        return max(s[rank - 1], 1.0) if len(s) < 9 else s[rank - 1]

    def score(t, lo, mid, hi):
        excess, half = (t - mid, hi - mid) if t > mid else (mid - t, mid - lo)
        return 0.0 if not excess > 0 else (min(excess / half, 1e6) if half > 0 else math.nan)
    resolved = origin + hz + 5
    worst = 0.0
    for g in range(1, int(origin.max()) + 1):
        for h in level:
            due = np.where(known & (resolved == g) & (hz == h))[0]
            if due.size:
                level[h] = min(max(level[h] + 0.05 * (0.10 - np.mean(inside[due] == 0)), 0.0), 1.0)
                scores[h] += [score(target[i], raw_lo[i], q50[i], raw_hi[i]) for i in due]
        for i in np.where(origin == g)[0]:
            w = factor(int(hz[i]))
            worst = max(worst, abs(q05[i] - (q50[i] - w * (q50[i] - raw_lo[i]))),
                        abs(q95[i] - (q50[i] + w * (raw_hi[i] - q50[i]))))
    return worst

f5 = h5()
with f5.File(outputs["h5"], "r") as f, f5.File(outputs["h5_1thread"], "r") as g:
    same = all(np.array_equal(f["forecasts/" + k][...], g["forecasts/" + k][...], equal_nan=True)
               for k in f["forecasts"].keys())
    check(same, "1 and 2 threads give bit-identical forecasts (online training included)")
with f5.File(outputs["h5"], "r") as f, f5.File(outputs["csv"], "r") as g:
    check(f.attrs["hpt_kind"] in ("forecast", b"forecast"), "output kind is forecast")
    check(list(f.attrs["horizons"]) == [10, 50, 100], "horizons stored")
    n = f["forecasts/run"].shape[0]
    check(n > 0, "forecast rows written")
    names = ["run", "origin", "horizon", "mean", "q05", "q50", "q95", "target", "error", "inside"]
    check(all(f["forecasts/" + k].shape == (n,) for k in names), "every forecast column has n rows")
    for b in ("last", "loglin", "power"):
        check(all(f[f"baselines/{b}/{k}"].shape == (n,) for k in ("forecast", "error", "inside")),
              f"baseline {b} columns")
    same = all(np.array_equal(f["forecasts/" + k][...], g["forecasts/" + k][...], equal_nan=True)
               for k in ("mean", "q05", "q50", "q95", "target"))
    check(same, "HDF5 and CSV input give the same forecasts")
    target = f["forecasts/target"][...]
    known = ~np.isnan(target)
    check(known.sum() > 0, "some targets are known")
    check(np.all(np.isfinite(f["forecasts/error"][...][known])), "hpt errors finite where known")
    for b in ("last", "loglin", "power"):
        check(np.all(np.isfinite(f[f"baselines/{b}/error"][...][known])), f"{b} errors finite")
    inside = f["forecasts/inside"][...]
    check(np.all((inside[known] == 0) | (inside[known] == 1)) and np.all(inside[~known] == -1),
          "inside flags: 0/1 where the target is known, -1 elsewhere")
    lo, hi = f["forecasts/q05"][...][known], f["forecasts/q95"][...][known]
    check(np.array_equal(inside[known] == 1, (target[known] >= lo) & (target[known] <= hi)),
          "inside flags match the stored interval and target")
    for name in ("hpt", "last", "loglin", "power"):
        cov = f[f"summary/{name}/coverage"][...]
        c = cov[~np.isnan(cov)]
        check(c.size > 0 and np.all((c >= 0) & (c <= 1)), f"{name} coverage in [0, 1]")
        check(np.all(np.isfinite(f[f"summary/{name}/mean_error"][...])), f"{name} mean error finite")
    # The mean 90 % width per horizon, rebuilt from the stored rows: over the rows whose target is
    # known and whose interval is defined (inside 0 or 1), q95 - q05.
    horizon_of = f["forecasts/horizon"][...]
    for name, group in (("hpt", "forecasts"), ("last", "baselines/last"),
                        ("combined", "baselines/combined"), ("learned", "baselines/learned")):
        scored = f[f"{group}/inside"][...] >= 0
        width = f[f"{group}/q95"][...] - f[f"{group}/q05"][...]
        rebuilt = [np.mean(width[scored & (horizon_of == h)]) if np.any(scored & (horizon_of == h))
                   else np.nan for h in sorted(set(horizon_of))]
        stored = f[f"summary/{name}/mean_width"][...]
        check(np.allclose(stored, rebuilt, rtol=1e-12, atol=0, equal_nan=True) and
              np.any(np.isfinite(stored)), f"{name}: mean 90 % width rebuilt from the rows",
              f"{stored} against {rebuilt}")
    # The calibrated intervals rebuilt from the stored raw ones with the quantile rule written out
    # here (rebuilt_calibration_error, above).
    origin, hz = f["forecasts/origin"][...], f["forecasts/horizon"][...]
    worst = rebuilt_calibration_error(
        origin, hz, known, target, inside, f["forecasts/q50"][...], f["forecasts/q05_raw"][...],
        f["forecasts/q95_raw"][...], f["forecasts/q05"][...], f["forecasts/q95"][...])
    check(worst < 1e-9, "the calibrated intervals follow the quantile rule rebuilt here", f"{worst}")
    runs = sorted(f["runs"].keys())
    with h5().File(os.path.join(sweep, "curves.h5"), "r") as c:
        swept = sorted(c["runs"].keys())
    check(runs == swept and len(runs) == 6, "every run of the small sweep in the output", str(runs))
    check("best_run_kept" in f["stop"].attrs and "total_steps_saved" in f["stop"].attrs,
          "stop list summary stored")

# The combined forecast rebuilt from the stored learned, last, loglin and power forecasts with the
# rule written out here: per run and horizon, weights exp(-(E - P)) * (min(E_k) + 0.01) / (E_k +
# 0.01) with P = 1 for learned; E_k sums each realised target of horizon k's error in learned
# interval widths (capped at 2; an expert without a value counts 1 while another has one, else 2),
# times (every / 10) / horizons / max(c, 0.25), decayed by exp(-steps / m) from the step at which it
# became known (m = 200 c, 75 c for horizons of 200 c steps and more), E the sum over horizons,
# c the run's clock: the last step of its group's longest run over 2000 (the default
# forecast.combination_clock = length);
# targets known at an origin count there. last, loglin and power enter held inside the learned 90 %
# interval of their row; power only at origins where its law decays (its forecasts differ between
# horizons; a flat law, b = 0 or no fit, is left out). The sweep's runs are logged every step.
with f5.File(outputs["h5"], "r") as f:
    run_of, origin, hz = f["forecasts/run"][...], f["forecasts/origin"][...], f["forecasts/horizon"][...]
    target = f["forecasts/target"][...]
    ex = np.stack([f[f"baselines/{b}/forecast"][...] for b in ("learned", "last", "loglin", "power")])
    spread = {}
    for key, p in zip(zip(run_of.tolist(), origin.tolist()), ex[3].tolist()):
        lo, hi = spread.get(key, (p, p))
        spread[key] = (min(lo, p), max(hi, p))
    flat = np.array([spread[key][1] - spread[key][0] <= 0 for key in zip(run_of.tolist(), origin.tolist())])
    ex[3] = np.where(flat, np.nan, ex[3])
    lo_l, hi_l = f["baselines/learned/q05"][...], f["baselines/learned/q95"][...]
    width = hi_l - lo_l
    moved = np.sum(np.isfinite(ex[1:]) & ((ex[1:] < lo_l) | (ex[1:] > hi_l)))
    ex[1:] = np.clip(ex[1:], lo_l, hi_l)
    combined = f["baselines/combined/forecast"][...]
    lo_c, hi_c = f["baselines/combined/q05"][...], f["baselines/combined/q95"][...]
    horizons = sorted(set(hz.tolist()))
    ids = {int(g.attrs["index"]): str(g.attrs.get("id", n)) for n, g in f["runs"].items()}
    with h5().File(os.path.join(sweep, "curves.h5"), "r") as c:
        group = {n: str(g.attrs.get("group", "")) for n, g in c["runs"].items()}
        last_step = {n: int(g["step"][-1]) for n, g in c["runs"].items()}
    group_end = {}
    for n, g in group.items():
        group_end[g] = max(group_end.get(g, 0), last_step[n])
    worst = 0.0
    for r in np.unique(run_of):
        clock = group_end[group[ids[int(r)]]] / 2000
        unit = (10 / 10) / len(horizons) / max(clock, 0.25)
        rows = np.where(run_of == r)[0]
        e = {h: np.zeros(4) for h in horizons}
        last, pending = None, sorted(rows[~np.isnan(target[rows])], key=lambda i: origin[i] + hz[i] + 5)
        for i in rows[np.argsort(origin[rows], kind="stable")]:
            while pending and origin[pending[0]] + hz[pending[0]] + 5 <= origin[i]:
                j = pending.pop(0)
                t = origin[j] + hz[j] + 5
                for h in horizons:
                    e[h] *= 1.0 if last is None else math.exp(-(t - last) / (clock * (75 if h >= 200 * clock else 200)))
                last = t
                missing = 1.0 if np.any(np.isfinite(ex[:, j])) else 2.0
                err = np.where(np.isfinite(ex[:, j]), np.abs(ex[:, j] - target[j]) / width[j], missing)
                e[hz[j]] += unit * np.minimum(err, 2.0)
            pooled = sum(e.values()) - np.array([1.0, 0, 0, 0])
            own = e[hz[i]]
            w = np.exp(-(pooled - np.min(pooled))) * (np.min(own) + 0.01) / (own + 0.01)
            ok = np.isfinite(ex[:, i])
            expect = np.sum(w[ok] * ex[ok, i]) / np.sum(w[ok])
            worst = max(worst, abs(expect - combined[i]))
    check(worst < 1e-9 and moved > 0,
          "the combined forecast follows the rule rebuilt here, guards held in the learned interval",
          f"{worst}, {moved} guard forecasts outside it")
    check(0 < np.sum(flat) < len(flat), "power's law is flat at some origins and decays at others",
          f"{np.sum(flat)} of {len(flat)} rows flat")
    # Its interval: the learned one moved with it, each half floored at the median half of the
    # origin's intervals of its horizon, calibrated by the same quantile rule.
    shift = combined - ex[0]
    known = ~np.isnan(target)
    inside_c = f["baselines/combined/inside"][...]
    raw_lo, raw_hi = floored_at_origin_median(origin, hz, combined, f["baselines/learned/q05"][...] + shift,
                                              f["baselines/learned/q95"][...] + shift)
    check(np.sum(raw_hi - raw_lo > f["baselines/learned/q95"][...] - f["baselines/learned/q05"][...] + 1e-12) > 0,
          "the floor widens some combined raw intervals")
    worst = rebuilt_calibration_error(origin, hz, known, target, inside_c, combined, raw_lo, raw_hi, lo_c, hi_c)
    check(worst < 1e-9, "the combined interval follows the quantile rule rebuilt here", f"{worst}")
    errs = {b: np.nanmean(f[f"baselines/{b}/error"][...][hz == 50]) for b in
            ("last", "loglin", "power", "law", "combined")}
    best = min(("last", "loglin", "power", "law"), key=lambda b: errs[b])
    k50 = sorted(set(hz)).index(50)
    widths = [f[f"summary/{b}/mean_width"][k50] for b in ("combined", best)]
line = [l for l in stdout["h5"].splitlines() if len(l.split()) == 8 and l.split()[0] == "50" and
        l.split()[2] == best]
check(len(line) == 1 and abs(float(line[0].split()[4]) - errs["combined"] / errs[best]) < 2e-3,
      "the headline gives hpt's forecast (combined) over the best simple forecaster at h = 50",
      f"{line} {errs}")
check(len(line) == 1 and all(abs(float(x) - w) <= 1e-3 * w for x, w in
                             zip(line[0].split()[6:], widths)),
      "and beside them the mean 90 % widths of both", f"{line} {widths}")

# The stop rule of forecast.stop_by = learned rebuilt from the stored forecasts: each run's level
# to beat is the lowest forecast final median of the others at that origin (a run not at the origin
# counts with its current level: log mean of its newest 10 losses), and the probability (the
# default forecast.stop_against = interval) is that of the run's final two-piece normal lying below
# that run's: integrated here over the other's quantiles on a fine trapezoid grid (hpt: Simpson's
# rule over the narrower one); against a run not at the origin, below its level.
Z95 = 1.6448536269514722


def below(mid, lo, hi, b):
    """P(X < b) for the two-piece normal X with median mid and 5/95 % quantiles lo, hi."""
    spread = (mid - lo if b < mid else hi - mid) / Z95
    return 0.5 * math.erfc(-(b - mid) / (spread * math.sqrt(2))) if spread > 0 else float(b > mid)


def below_other(x, y):
    """P(X < Y) for independent two-piece normals x, y = (mid, lo, hi); y without spread: a point."""
    s_lo, s_hi = (y[0] - y[1]) / Z95, (y[2] - y[0]) / Z95
    if not (s_lo > 0 or s_hi > 0):
        return below(*x, y[0])
    z = np.linspace(-9, 9, 36001)
    v = y[0] + np.where(z < 0, s_lo, s_hi) * z
    f = np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi) * np.array([below(*x, t) for t in v])
    return float(np.sum((f[1:] + f[:-1]) * np.diff(z)) / 2)


with f5.File(outputs["h5"], "r") as f, f5.File(os.path.join(sweep, "curves.h5"), "r") as c:
    ids = {int(g.attrs["index"]): g.attrs["id"] for g in f["runs"].values()}
    curves = {i: (c[f"runs/{ids[i]}/step"][...], c[f"runs/{ids[i]}/loss"][...]) for i in ids}
    o = {k: f["origins/" + k][...] for k in f["origins"].keys()}
    worst_best, worst_p, worst_median, spread_used = 0.0, 0.0, 0.0, 0
    for j in range(len(o["run"])):
        at = o["origin"] == o["origin"][j]
        levels = []
        for q in ids:
            if q == o["run"][j]:
                continue
            here = at & (o["run"] == q)
            step, loss = curves[q]
            seen = loss[step <= o["origin"][j]]
            if here.any():
                k = np.where(here)[0][0]
                levels.append((o["final_q50"][k], o["final_q05"][k], o["final_q95"][k]))
            elif seen.size:
                levels.append((np.log(np.mean(seen[-10:])),) * 3)
        other = min(levels)
        x = (o["final_q50"][j], o["final_q05"][j], o["final_q95"][j])
        p = below_other(x, other)
        spread_used += other[2] > other[1]
        worst_best = max(worst_best, abs(other[0] - o["best_other"][j]))
        worst_p = max(worst_p, abs(p - o["beat_probability"][j]))
        worst_median = max(worst_median, abs(float(np.median([v[0] for v in levels])) - o["others_median"][j]))
    check(worst_best < 1e-9 and worst_p < 1e-5 and spread_used > 0,
          "stop_by = learned: the level to beat and the probability (against the other's interval) "
          "follow the rule rebuilt here", f"{worst_best} {worst_p} {spread_used}")
    check(worst_median < 1e-9, "the median of the others' levels follows the rule rebuilt here",
          f"{worst_median}")

# forecast.stop_rule = median: a run is stopped when P(beat best other) < 1 - stop_confidence or
# its forecast final median at the judging origin lies above the others' median there (confidence 1:
# by the median alone).
out = os.path.join(a.work, "out_median")
r = run(a.hpt, deck, f"forecast.input={sweep}/curves.h5", f"output.dir={out}", "output.name=fc",
        "forecast.stop_rule=median", "forecast.stop_confidence=1", *small)
check(r.returncode == 0 and "others' median" in r.stdout, "the median rule runs and says so",
      r.stdout[-2000:] + r.stderr)
with f5.File(os.path.join(out, "fc.h5"), "r") as g:
    o = {k: g["origins/" + k][...] for k in g["origins"].keys()}
    agree, by_median = True, 0
    for run_g in g["runs"].values():
        at = (o["run"] == run_g.attrs["index"]) & (o["origin"] == run_g.attrs["stop_origin"])
        if not at.any():
            continue
        p, mid, med = o["beat_probability"][at][0], o["final_q50"][at][0], o["others_median"][at][0]
        rule = bool(p < 0.0 or mid > med)
        by_median += int(rule)
        agree = agree and rule == bool(run_g.attrs["stopped"])
    check(agree and g["stop"].attrs["rule"] in (b"median", "median"),
          "median rule: the stop list follows the rule rebuilt from the stored forecasts")
    check(by_median > 0, "and stops runs by the median alone", str(by_median))
r = run(a.hpt, deck, f"forecast.input={sweep}/curves.h5", f"output.dir={out}_hpt",
        "forecast.stop_rule=median", "forecast.stop_by=hpt", *small)
check(r.returncode == 2 and "forecast.stop_rule = median" in r.stderr and
      not os.path.exists(out + "_hpt"), "stop_rule = median with stop_by = hpt: exit 2", r.stderr)

# forecast.stop_rule = both: a run is stopped when its forecast final median and its current level
# (log mean of the newest 10 losses) both lie above the forecast.stop_quantile quantile (linear, as
# numpy's) of those of the other runs forecast at the judging origin (a run that has ended, or
# diverged, has no forecast there and is left out).
out = os.path.join(a.work, "out_both")
r = run(a.hpt, deck, f"forecast.input={sweep}/curves.h5", f"output.dir={out}", "output.name=fc",
        "forecast.stop_rule=both", "forecast.stop_quantile=0.4", *small)
check(r.returncode == 0 and "0.4 quantile of the other runs'" in r.stdout,
      "the rule both runs and says so", r.stdout[-2000:] + r.stderr)
with f5.File(os.path.join(out, "fc.h5"), "r") as g, f5.File(os.path.join(sweep, "curves.h5"), "r") as c:
    o = {k: g["origins/" + k][...] for k in g["origins"].keys()}
    def run_id(rg):
        rid = rg.attrs["id"]
        return rid.decode() if isinstance(rid, bytes) else rid

    curves = {int(rg.attrs["index"]): c["runs"][run_id(rg)] for rg in g["runs"].values()}

    def level(i, t):
        loss = curves[i]["loss"][...][curves[i]["step"][...] <= t]
        return float(np.log(np.mean(loss[-10:]))) if loss.size else float("nan")

    agree, stopped, worst = True, 0, 0.0
    for run_g in g["runs"].values():
        i, t = int(run_g.attrs["index"]), int(run_g.attrs["stop_origin"])
        if t < 0 or math.isnan(run_g.attrs["stop_final"]):
            continue
        finals, levels = [], []
        for q in curves:
            at = (o["run"] == q) & (o["origin"] == t)
            if q == i or not at.any() or np.isnan(o["final_q50"][at][0]):
                continue
            finals.append(float(o["final_q50"][at][0]))
            levels.append(level(q, t))
        qf, ql = np.quantile(finals, 0.4), np.quantile(levels, 0.4)
        own = level(i, t)
        worst = max(worst, abs(qf - run_g.attrs["stop_others_final_quantile"]),
                    abs(ql - run_g.attrs["stop_others_level_quantile"]), abs(own - run_g.attrs["stop_level"]))
        rule = bool(run_g.attrs["stop_final"] > qf and own > ql)
        stopped += int(rule)
        agree = agree and rule == bool(run_g.attrs["stopped"])
    check(agree and worst < 1e-9 and g["stop"].attrs["rule"] in (b"both", "both"),
          "rule both: the stop list follows the rule rebuilt from the curves and the stored forecasts",
          f"{worst}")
    check(0 < stopped < len(curves), "and stops some runs, not all", str(stopped))
r = run(a.hpt, deck, f"forecast.input={sweep}/curves.h5", f"output.dir={out}_q",
        "forecast.stop_rule=both", "forecast.stop_quantile=1", *small)
check(r.returncode == 2 and "forecast.stop_quantile = 1" in r.stderr and not os.path.exists(out + "_q"),
      "stop_quantile = 1: exit 2 naming the key", r.stderr)

# forecast.ensemble = off: no hpt column; the ensemble-free forecasters (combined guards learned with
# last and loglin, so it is one of them) and the stop list unchanged.
out = os.path.join(a.work, "out_no_ensemble")
r = run(a.hpt, deck, f"forecast.input={sweep}/curves.h5", f"output.dir={out}", "output.name=fc",
        "forecast.ensemble=off", *small)
check(r.returncode == 0 and "forecast.ensemble = off" in r.stdout, "ensemble off runs and says so",
      r.stdout[-2000:] + r.stderr)
with f5.File(outputs["h5"], "r") as f, f5.File(os.path.join(out, "fc.h5"), "r") as g:
    check(np.all(np.isnan(g["forecasts/mean"][...])), "ensemble off: the hpt column is NaN")
    for b in ("last", "loglin", "power", "law", "learned", "combined"):
        check(np.array_equal(f[f"baselines/{b}/forecast"][...], g[f"baselines/{b}/forecast"][...],
                             equal_nan=True), f"ensemble off: {b} forecasts unchanged")
    check(np.array_equal(f["stop/run"][...], g["stop/run"][...]),
          "ensemble off: the stop list (stop_by = learned) unchanged")
r = run(a.hpt, deck, f"forecast.input={sweep}/curves.h5", f"output.dir={out}_hpt",
        "forecast.ensemble=off", "forecast.stop_by=hpt", *small)
check(r.returncode == 2 and "forecast.stop_by = hpt" in r.stderr and "forecast.ensemble = off" in
      r.stderr and not os.path.exists(out + "_hpt"), "stop_by = hpt without the ensemble: exit 2",
      r.stderr)

# A sweep logged every 7 steps: read step by step (a note says so), origins only at logged steps,
# targets scored, and no forecast reads a loss logged after its origin: tripling every loss logged
# after step T leaves every row and origin judgment made at or before T bit-identical.
def thinned_copy(path, keep, scale_after=None):
    """The small sweep's CSV with only the rows keep(run, step) accepts, every loss logged after
    scale_after tripled; returns {run: its logged steps}."""
    kept = {}
    with open(os.path.join(sweep, "curves.csv")) as src, open(path, "w") as dst:
        header = src.readline()
        dst.write(header)
        cols = header.strip().split(",")
        for line in src:
            v = line.strip().split(",")
            rid, step = v[cols.index("run")], int(v[cols.index("step")])
            if not keep(rid, step):
                continue
            kept.setdefault(rid, set()).add(step)
            if scale_after is not None and step > scale_after and v[cols.index("loss")]:
                v[cols.index("loss")] = repr(3.0 * float(v[cols.index("loss")]))
            dst.write(",".join(v) + "\n")
    return kept


T = 140
sparse = {}
for name, after in (("sparse", None), ("sparse_changed", T)):
    thinned_copy(os.path.join(a.work, name + ".csv"), lambda rid, step: step % 7 == 0, after)
    r = run(a.hpt, deck, f"forecast.input={a.work}/{name}.csv", f"output.dir={a.work}/out_{name}",
            "output.name=fc", *small)
    check(r.returncode == 0 and "runs are logged every 7 steps" in r.stdout,
          f"{name}: a sweep logged every 7 steps is forecast, with a note", r.stdout[-2000:] + r.stderr)
    sparse[name] = os.path.join(a.work, f"out_{name}", "fc.h5")
with f5.File(sparse["sparse"], "r") as f, f5.File(sparse["sparse_changed"], "r") as g:
    origin = f["forecasts/origin"][...]
    check(origin.size > 0 and np.all(origin % 7 == 0), "sparse: origins only at logged steps",
          str(np.unique(origin)))
    check(np.sum(~np.isnan(f["baselines/combined/error"][...])) > 0, "sparse: targets are scored")
    early = origin <= T
    check(early.any() and (~early).any(), "sparse: origins on both sides of the change")
    same = all(np.array_equal(f[k][...][early], g[k][...][early], equal_nan=True) for k in
               ["forecasts/mean", "forecasts/q05", "forecasts/q95"] +
               [f"baselines/{b}/{q}" for b in ("last", "loglin", "power", "law", "learned", "combined")
                for q in ("forecast", "q05", "q95")])
    check(same, "sparse: every forecast made at or before the change is unchanged by it")
    o_early = f["origins/origin"][...] <= T
    check(np.array_equal(f["origins/beat_probability"][...][o_early],
                         g["origins/beat_probability"][...][o_early], equal_nan=True),
          "sparse: and so is every judgment made at or before it")

# Forecasts h steps ahead whose target window lies before the next logged step (here 5, 10 and 15
# steps ahead, logged every 20) are the line from the loss logged at the origin to the learned
# forecast of the next logged step: every horizon of one origin must imply the same forecast of
# that step, solved here from the densified loss of the thinned file
# (docs/method.md#runs-logged-every-few-steps).
def next_logged_forecast(loss_at, g, h, learned, every=20):
    """The loss at g + every that makes the window's mean equal exp(learned), the rest of the window
    known (steps <= g: the line between logged losses)."""
    known, weight = 0.0, 0.0
    for s in range(g + h - 4, g + h + 6):
        w = (s - g) / every
        known += loss_at(s) if s <= g else loss_at(g) * (1.0 - w)
        weight += max(w, 0.0)
    return (10.0 * math.exp(learned) - known) / weight


def densified_loss(path):
    runs = {}
    with open(path) as src:
        cols = src.readline().strip().split(",")
        for line in src:
            v = line.strip().split(",")
            runs.setdefault(v[cols.index("run")], []).append((int(v[cols.index("step")]),
                                                              float(v[cols.index("loss")])))
    return {rid: (lambda pts: lambda s: float(np.interp(s, *zip(*sorted(pts)))))(pts)
            for rid, pts in runs.items()}


thinned_copy(os.path.join(a.work, "every20.csv"), lambda rid, step: step % 20 == 0)
r = run(a.hpt, deck, f"forecast.input={a.work}/every20.csv", f"output.dir={a.work}/out_anchor",
        "output.name=fc", "forecast.ensemble=off", *small[1:], "forecast.horizons=5,10,15,30")
check(r.returncode == 0, "sparse: horizons inside the logging interval", r.stdout[-2000:] + r.stderr)
loss_of = densified_loss(os.path.join(a.work, "every20.csv"))
with f5.File(os.path.join(a.work, "out_anchor", "fc.h5"), "r") as f:
    ids = {int(x.attrs["index"]): (x.attrs["id"].decode() if isinstance(x.attrs["id"], bytes)
                                   else x.attrs["id"]) for x in f["runs"].values()}
    rows = zip(f["forecasts/run"][...], f["forecasts/origin"][...], f["forecasts/horizon"][...],
               f["baselines/learned/forecast"][...])
    implied = {}
    for rr, g, h, learned in rows:
        if h in (5, 10, 15):
            implied.setdefault((rr, g), []).append(
                next_logged_forecast(loss_of[ids[rr]], int(g), int(h), learned))
    pairs = [v for v in implied.values() if len(v) == 3]
    spread = max((max(v) - min(v)) / abs(min(v)) for v in pairs) if pairs else math.inf
    check(len(pairs) > 20 and spread < 1e-9,
          "sparse: forecasts inside the logging interval rest on one forecast of the next logged "
          "step", f"{len(pairs)} origins, largest relative spread {spread:.3g}")

# run/corpus/logged-every: the small sweep's HDF5 file thinned to every 20th step (and each run's
# last), every per-step column cut the same way, checked against the file it was made from; K = 1
# refused with nothing written.
tool = os.path.join(a.root, "run", "corpus", "logged-every")
thin = os.path.join(a.work, "every20.h5")
p = subprocess.run([tool, "20", f"{sweep}/curves.h5", thin], capture_output=True, text=True)
check(p.returncode == 0 and "logged every 20 steps" in p.stdout, "logged-every runs", p.stderr)
with f5.File(f"{sweep}/curves.h5", "r") as src, f5.File(thin, "r") as dst:
    ok = set(src["runs"]) == set(dst["runs"])
    for rid, r in src["runs"].items():
        steps = r["step"][...]
        keep = (steps % 20 == 0) | (np.arange(steps.size) == steps.size - 1)
        ok = ok and all(np.array_equal(r[k][...][keep], dst[f"runs/{rid}/{k}"][...], equal_nan=True)
                        for k in r if k in ("step", "loss", "lr", "grad_norm"))
check(ok, "logged-every keeps the steps divisible by K and each run's last, every column cut alike")
p = subprocess.run([tool, "1", f"{sweep}/curves.h5", thin + "_1"], capture_output=True, text=True)
check(p.returncode != 0 and "at least 2" in p.stderr and not os.path.exists(thin + "_1"),
      "logged-every refuses K = 1, nothing written", p.stderr)

# run/corpus/point-steps: the thinned file's runs with their logged points counted as steps 1..n, the per-point
# columns unchanged in order, steps_planned the number of points; hpt forecasts the result.
tool = os.path.join(a.root, "run", "corpus", "point-steps")
points = os.path.join(a.work, "points.h5")
p = subprocess.run([tool, thin, points], capture_output=True, text=True)
check(p.returncode == 0 and "one step per logged point" in p.stdout, "point-steps runs", p.stderr)
with f5.File(thin, "r") as src, f5.File(points, "r") as dst:
    ok = set(src["runs"]) == set(dst["runs"])
    for rid, r in src["runs"].items():
        d = dst[f"runs/{rid}"]
        n = r["step"].shape[0]
        ok = ok and np.array_equal(d["step"][...], np.arange(1, n + 1))
        ok = ok and all(np.array_equal(r[k][...], d[k][...], equal_nan=True) for k in ("loss", "lr") if k in r)
        ok = ok and ("steps_planned" not in r.attrs or int(d.attrs["steps_planned"]) == n)
check(ok, "point-steps counts each logged point as one step and keeps its columns")
every2, points2 = os.path.join(a.work, "every2.h5"), os.path.join(a.work, "points2.h5")
subprocess.run([os.path.join(a.root, "run", "corpus", "logged-every"), "2", f"{sweep}/curves.h5", every2], check=True,
               capture_output=True)
subprocess.run([tool, every2, points2], check=True, capture_output=True)
r = run(a.hpt, deck, f"forecast.input={points2}", "forecast.horizons=5,10", "forecast.every=2",
        "forecast.ensemble=off", f"output.dir={a.work}", "output.name=points_forecast")
check(r.returncode == 0 and os.path.exists(os.path.join(a.work, "points_forecast.h5")),
      "forecast mode reads a point-steps file", r.stderr[-400:])

# Runs on different logging grids (every 5 steps from 5, every 7 steps from 6: off the grid of
# forecast.every = 10): every run has origins, each at one of its own logged steps, and forecasts and
# judgments made up to T read no loss of any run logged after T (the ensemble off: it trains on the
# filled-in steps of every run, docs/outputs.md#loss-curves).
T = 130
mixed = {}
for name, after in (("mixed", None), ("mixed_changed", T)):
    logged = thinned_copy(os.path.join(a.work, name + ".csv"),
                          lambda rid, step: step % 7 == 6 if int(rid[1:3]) % 2 else step % 5 == 0,
                          after)
    r = run(a.hpt, deck, f"forecast.input={a.work}/{name}.csv", f"output.dir={a.work}/out_{name}",
            "output.name=fc", "forecast.ensemble=off", *small)
    check(r.returncode == 0 and "runs are logged every 5 to 7 steps" in r.stdout,
          f"{name}: runs logged every 5 and every 7 steps are forecast", r.stdout[-2000:] + r.stderr)
    mixed[name] = os.path.join(a.work, f"out_{name}", "fc.h5")
with f5.File(mixed["mixed"], "r") as f, f5.File(mixed["mixed_changed"], "r") as g:
    ids = {int(x.attrs["index"]): (x.attrs["id"].decode() if isinstance(x.attrs["id"], bytes)
                                   else x.attrs["id"]) for x in f["runs"].values()}
    run_of, origin = f["forecasts/run"][...], f["forecasts/origin"][...]
    check(all(o in logged[ids[r]] for r, o in zip(run_of, origin)),
          "mixed: every origin is a logged step of its run")
    check(set(np.unique(run_of)) == set(ids), "mixed: every run has origins")
    early = origin <= T
    same = all(np.array_equal(f[k][...][early], g[k][...][early], equal_nan=True) for k in
               [f"baselines/{b}/{q}" for b in ("last", "loglin", "power", "law", "learned", "combined")
                for q in ("forecast", "q05", "q95")])
    check(early.any() and same, "mixed: every forecast made up to the change is unchanged by it")
    o_early = f["origins/origin"][...] <= T
    check(all(np.array_equal(f[f"origins/{k}"][...][o_early], g[f"origins/{k}"][...][o_early],
                             equal_nan=True) for k in ("beat_probability", "best_other")),
          "mixed: and so is every judgment made up to it (the other runs' levels included)")
r = run(a.hpt, deck, f"forecast.input={a.work}/mixed.csv", f"output.dir={a.work}/out_mixed_ft",
        "forecast.finetune=on", *small)
check(r.returncode == 2 and "forecast.finetune = on" in r.stderr and
      not os.path.exists(f"{a.work}/out_mixed_ft"), "fine-tuning on sparse runs: exit 2", r.stderr)

# A wide CSV (step, then one column of losses per run, as experiment trackers export it; an empty
# cell is no value) gives the same forecasts as the long file of the same losses.
def long_and_wide(long_path, wide_path):
    """Writes the small sweep's losses as a long file (run,step,loss) and as a wide one."""
    rows = {}
    with open(os.path.join(sweep, "curves.csv")) as src:
        cols = src.readline().strip().split(",")
        for line in src:
            v = line.strip().split(",")
            if v[cols.index("loss")]:
                rows.setdefault(v[cols.index("run")], {})[int(v[cols.index("step")])] = \
                    v[cols.index("loss")]
    ids = sorted(rows)
    with open(long_path, "w") as fh:
        fh.write("run,step,loss\n")
        for rid in ids:
            fh.writelines(f"{rid},{st},{x}\n" for st, x in sorted(rows[rid].items()))
    with open(wide_path, "w") as fh:
        fh.write("step," + ",".join(ids) + "\n")
        for st in sorted({st for r in rows.values() for st in r}):
            fh.write(f"{st}," + ",".join(rows[rid].get(st, "") for rid in ids) + "\n")


long_and_wide(os.path.join(a.work, "long.csv"), os.path.join(a.work, "wide.csv"))
wide_out = {}
for name in ("long", "wide"):
    r = run(a.hpt, deck, f"forecast.input={a.work}/{name}.csv", f"output.dir={a.work}/out_{name}",
            "output.name=fc", "forecast.ensemble=off", *small)
    check(r.returncode == 0, f"{name} CSV is forecast", r.stdout[-2000:] + r.stderr)
    wide_out[name] = os.path.join(a.work, f"out_{name}", "fc.h5")
check("wide file: 6 runs, one per column" in r.stdout, "the wide file is named so in a note",
      r.stdout[-2000:])
with f5.File(wide_out["long"], "r") as f, f5.File(wide_out["wide"], "r") as g:
    keys = ["forecasts/run", "forecasts/origin", "forecasts/target"] + \
        [f"baselines/{b}/forecast" for b in ("last", "loglin", "learned", "combined")]
    check(all(np.array_equal(f[k][...], g[k][...], equal_nan=True) for k in keys),
          "the wide CSV gives the long one's forecasts")

# Malformed inputs: exit 2, a precise message, nothing written.
bad_dir = os.path.join(a.work, "bad")
os.makedirs(bad_dir)
cases = {
    "negative.csv": ("run,step,loss\na,1,1.0\na,2,-1\n", ["negative.csv", "run 'a'", "line 3",
                                                          "negative"]),
    # Too short for any horizon: refused before any work, naming the key.
    "short.csv": ("run,step,loss\na,2,1.0\na,1,0.5\n", ["forecast.horizons", "no run is long enough"]),
    "cols.csv": ("run,loss\na,1.0\n", ["cols.csv", "missing column 'step'"]),
    "text.csv": ("run,step,loss\na,1,abc\n", ["text.csv", "line 2", "not a number"]),
    "wide_text.csv": ("step,a,b\n1,1.0,2.0\n2,0.9,x\n", ["wide_text.csv", "run 'b'", "line 3",
                                                         "not a number"]),
    "wide_twice.csv": ("step,a,a\n1,1.0,2.0\n", ["wide_twice.csv", "column 'a' appears twice"]),
    "wide_short.csv": ("step,a,b\n1,1.0,2.0\n2,0.9\n3,0.8,1.0\n", ["wide_short.csv", "line 3",
                                                                      "has 2 columns"]),
}
for name, (text, parts) in cases.items():
    path = os.path.join(bad_dir, name)
    with open(path, "w") as fh:
        fh.write(text)
    out = os.path.join(a.work, "refused_" + name)
    r = run(a.hpt, deck, f"forecast.input={path}", f"output.dir={out}", *small)
    check(r.returncode == 2, f"{name}: exit 2", r.stderr)
    check(all(x in r.stderr for x in parts), f"{name}: message names file, run and line", r.stderr)
    check(not os.path.exists(out), f"{name}: nothing written")
for label, path, part in (("missing file", os.path.join(bad_dir, "none.h5"), "does not exist"),
                          ("folder", bad_dir, "is a folder")):
    out = os.path.join(a.work, "refused_" + label.replace(" ", "_"))
    r = run(a.hpt, deck, f"forecast.input={path}", f"output.dir={out}", *small)
    check(r.returncode == 2 and part in r.stderr, f"{label}: exit 2 naming it", r.stderr)
    check(not os.path.exists(out), f"{label}: nothing written")

# skip_bad_runs: the bad run is skipped with a warning naming it, the others are forecast.
mixed = os.path.join(bad_dir, "mixed.csv")
with open(sweep + "/curves.csv") as src, open(mixed, "w") as dst:
    dst.write(src.read() + "broken,1,1.0\nbroken,1,1.0\n")
out = os.path.join(a.work, "out_skip")
r = run(a.hpt, deck, f"forecast.input={mixed}", f"output.dir={out}", "output.name=fc",
        "forecast.skip_bad_runs=true", *small)
check(r.returncode == 0 and "skipped run 'broken'" in r.stderr, "skip_bad_runs warns and goes on",
      r.stderr)
r = run(a.hpt, deck, f"forecast.input={mixed}", f"output.dir={out}_strict", *small)
check(r.returncode == 2 and "run 'broken'" in r.stderr, "without skip_bad_runs: refused", r.stderr)
finish()
