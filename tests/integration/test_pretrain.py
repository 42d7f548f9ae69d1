"""run.mode = pretrain and the learned level forecaster in forecast mode: the shipped deck remakes the shipped
model file (the same weights); pretrain.split selects runs; forecast mode loads the default model and scores
`learned` with an interval from the first origin; a model pretrained here is used when forecast.pretrained names it; every bad input ends with exit 2 naming the key, nothing written."""
import os
import shutil

import numpy as np

import hptest

a = hptest.args()
h5py = hptest.h5()
out = os.path.join(a.work, "out")


def write_corpus(path, runs=6, steps=400, split=None, val_every=0):
    """Seeded noisy power laws under cosine schedules, in hpt's HDF5 curve layout; with val_every, a
    validation loss (the noiseless law, 5 % above) every val_every steps."""
    rng = np.random.default_rng(5)
    with h5py.File(path, "w") as f:
        for r in range(runs):
            s = np.arange(1, steps + 1)
            lr = 0.1 * 0.5 * (1 + np.cos(np.pi * s / steps))
            loss = (0.2 + (1 + r) * s ** -0.4) * np.exp(0.05 * rng.standard_normal(steps))
            g = f.create_group(f"runs/r{r}")
            g["step"], g["loss"], g["lr"] = s.astype(np.int64), loss, lr
            if val_every:
                vs = s[val_every - 1::val_every]
                g["val_step"], g["val_loss"] = vs.astype(np.int64), 1.05 * (0.2 + (1 + r) * vs ** -0.4)
            if split:
                g.attrs["split"] = split[r % len(split)]


def weights(path):
    with h5py.File(path, "r") as f:
        return {k: f[f"level_model/{k}"][()] for k in ("median", "q05", "q95")}


# 1. The shipped deck remakes the shipped model from the corpus in tests/data.
# About 13 min on one core, more beside other tests: the ctest limit (tests/CMakeLists.txt) bounds it.
r = hptest.run(a.hpt, hptest.deck_path(a.root, "pretrain.ini"), f"output.dir={out}", cwd=a.root, timeout=1740)
hptest.check(r.returncode == 0 and "pretrain: 5909 runs" in r.stdout, "the shipped pretrain deck runs on the 2974 "
             "runs of its fourteen curve files and the 2935 validation curves among them",
             r.stdout[-800:] + r.stderr[-800:])
made, shipped = os.path.join(out, "level-model.h5"), os.path.join(a.root, "inputs", "models", "level-model.h5")
if os.path.exists(made):
    w, s = weights(made), weights(shipped)
    # Builds differ in rounding (optimisation, sanitizers); each fit is converged to 1e-8 in its
    # standardised weights, so the weights agree far closer than another corpus moves them.
    tol = {"median": 1e-5, "q05": 1e-5, "q95": 1e-5}
    hptest.check(all(np.allclose(w[k], s[k], rtol=0, atol=tol[k]) for k in w),
                 "the shipped model file holds the weights its deck makes", str({k: w[k] - s[k] for k in w}))
    with h5py.File(made, "r") as f:
        hptest.check(f.attrs["hpt_kind"] == "level_model" and f["level_model"].attrs["runs"] == 5909,
                     "the model file is a level_model of 5909 runs")

# 2. pretrain.split keeps the runs of one split.
corpus = os.path.join(a.work, "corpus.h5")
write_corpus(corpus, runs=6, split=["tune", "heldout"])
deck = os.path.join(a.work, "pretrain.ini")
with open(deck, "w") as f:
    f.write(f"[run]\nmode = pretrain\n[pretrain]\ninput = {corpus}\nsplit = tune\n[output]\ndir = {out}\n"
            "name = small\n")
r = hptest.run(a.hpt, deck)
small = os.path.join(out, "small.h5")
hptest.check(r.returncode == 0 and "pretrain: 3 runs" in r.stdout and os.path.exists(small),
             "pretrain.split = tune keeps 3 of 6 runs", r.stdout[-600:] + r.stderr[-600:])

# Several files and several splits: their runs together.
r = hptest.run(a.hpt, deck, f"pretrain.input={corpus}, {corpus}", "pretrain.split=tune,heldout",
               "output.name=two")
hptest.check(r.returncode == 0 and "pretrain: 12 runs" in r.stdout,
             "pretrain.input lists two files and pretrain.split two splits: 12 runs",
             r.stdout[-600:] + r.stderr[-600:])

# pretrain.validation_runs: every run with 10 or more validation losses also gives its validation curve as a run;
# a run with fewer gives none. 400 steps with a validation loss every 25 steps: 16 points each.
vcorpus = os.path.join(a.work, "vcorpus.h5")
write_corpus(vcorpus, runs=4, val_every=25)
with h5py.File(vcorpus, "a") as f:  # one run keeps 9 validation losses: too few for a curve
    vs, vl = f["runs/r0/val_step"][:9], f["runs/r0/val_loss"][:9]
    del f["runs/r0/val_step"], f["runs/r0/val_loss"]
    f["runs/r0/val_step"], f["runs/r0/val_loss"] = vs, vl
r = hptest.run(a.hpt, deck, f"pretrain.input={vcorpus}", "pretrain.split=", "pretrain.validation_runs=on",
               "output.name=withval")
hptest.check(r.returncode == 0 and "pretrain: 7 runs" in r.stdout,
             "pretrain.validation_runs = on adds the validation curves of the 3 runs that have 10 or more",
             r.stdout[-600:] + r.stderr[-600:])
r = hptest.run(a.hpt, deck, f"pretrain.input={vcorpus}", "pretrain.split=", "output.name=withoutval")
hptest.check(r.returncode == 0 and "pretrain: 4 runs" in r.stdout, "by default the validation curves are not runs",
             r.stdout[-600:] + r.stderr[-600:])

# pretrain.logged_every_runs: every run recorded at every step (400 steps here) also gives its copy logged every K
# steps as a run, where the copy keeps 10 or more entries: K = 40 keeps 10 (40 .. 400), K = 45 keeps 9 (45 .. 360
# and 400); a copy of a validation curve is never made. 1 is refused before any work.
for k, runs, why in ((40, 8, "adds a copy of each of the 4 runs"), (45, 4, "adds none: 9 entries are too few")):
    r = hptest.run(a.hpt, deck, f"pretrain.input={vcorpus}", "pretrain.split=", f"pretrain.logged_every_runs={k}",
                   f"output.name=every{k}")
    hptest.check(r.returncode == 0 and f"pretrain: {runs} runs" in r.stdout,
                 f"pretrain.logged_every_runs = {k} {why}", r.stdout[-600:] + r.stderr[-600:])
for sets, runs, why in ((["pretrain.validation_runs=on"], 11, "with validation runs too: 4 runs, 3 validation "
                         "curves and 4 logged copies"),
                        (["pretrain.validation_runs=on", "pretrain.recorded_runs=off"], 7,
                         "pretrain.recorded_runs = off: the 4 logged copies and the 3 validation curves, not the runs")):
    r = hptest.run(a.hpt, deck, f"pretrain.input={vcorpus}", "pretrain.split=", "pretrain.logged_every_runs=40",
                   *sets, f"output.name=every40_{runs}")
    hptest.check(r.returncode == 0 and f"pretrain: {runs} runs" in r.stdout, why, r.stdout[-600:] + r.stderr[-600:])

# 3. Forecast mode: the default (shipped) model, and one named by forecast.pretrained.
curves = os.path.join(a.work, "curves.h5")
write_corpus(curves, runs=3, steps=300)
fdeck = os.path.join(a.work, "forecast.ini")
with open(fdeck, "w") as f:
    f.write(f"[run]\nmode = forecast\n[forecast]\ninput = {curves}\nhorizons = 10,50\nevery = 20\nscenarios = 2\n"
            f"train_runs = 1\n[dynamics]\nmembers = 2\nhidden = 8\nstochastic = 2\n[output]\ndir = {out}\n")
for name, sets, model in (("default", [], shipped), ("named", [f"forecast.pretrained={small}"], small)):
    r = hptest.run(a.hpt, fdeck, f"output.name=fc_{name}", *sets)
    hptest.check(r.returncode == 0 and "learned level forecaster: " + model in r.stdout,
                 f"forecast with the {name} model names it", r.stdout[-600:] + r.stderr[-600:])
    fc = os.path.join(out, f"fc_{name}.h5")
    if r.returncode != 0 or not os.path.exists(fc):
        continue
    # The features and the model are checked in the unit tests; here every row must have a finite forecast and
    # an interval that holds it, from the first origin on.
    with h5py.File(fc, "r") as f:
        b = f["baselines/learned"]
        fcst, lo, hi = b["forecast"][()], b["q05"][()], b["q95"][()]
        last = f["baselines/last/forecast"][()]
        hptest.check(np.all(np.isfinite(fcst)) and np.all(lo <= fcst) and np.all(fcst <= hi),
                     f"{name}: learned forecasts are finite, inside their intervals from the first origin")
        hptest.check(not np.allclose(fcst, last), f"{name}: learned differs from last")
        hptest.check("learned" in f["summary"], f"{name}: the summary scores learned")
r = hptest.run(a.hpt, fdeck, "output.name=fc_none", "forecast.pretrained=none")
hptest.check(r.returncode == 0 and "learned forecaster repeats last" in r.stdout, "forecast.pretrained = none")

# 3a. forecast.pretrained_sparse: the runs read step by step from a sparser log take their learned forecast from
# that model, the others from forecast.pretrained. A file of one run logged every step and one logged every 10:
# with the shipped model for the dense run and `small` for the sparse one, each run's learned rows equal those of
# a forecast made with that model for every run; a sparse model without a forecast.pretrained one is refused.
mixed = os.path.join(a.work, "mixed.h5")
write_corpus(mixed, runs=2, steps=300)
with h5py.File(mixed, "r+") as f:
    g = f["runs/r1"]
    keep = g["step"][()] % 10 == 0
    for k in ("step", "loss", "lr"):
        data = g[k][()][keep]
        del g[k]
        g[k] = data
learned_of = {}
for name, sets in (("mix_shipped", []), ("mix_small", [f"forecast.pretrained={small}"]),
                   ("mix_both", [f"forecast.pretrained_sparse={small}"])):
    r = hptest.run(a.hpt, fdeck, f"forecast.input={mixed}", f"output.name={name}", *sets)
    hptest.check(r.returncode == 0, f"{name}: forecast of a dense and a sparse run", r.stdout[-600:] + r.stderr[-600:])
    if r.returncode == 0:
        with h5py.File(os.path.join(out, name + ".h5"), "r") as f:
            learned_of[name] = (f["forecasts/run"][()], f["baselines/learned/forecast"][()])
if len(learned_of) == 3:
    run_idx, both = learned_of["mix_both"]
    with h5py.File(os.path.join(out, "mix_both.h5"), "r") as f:
        sparse_index = [int(g.attrs["index"]) for n, g in f["runs"].items() if g.attrs.get("id", n) == "r1"][0]
    for name, rows in (("mix_shipped", run_idx != sparse_index), ("mix_small", run_idx == sparse_index)):
        hptest.check(np.array_equal(both[rows], learned_of[name][1][rows]),
                     f"pretrained_sparse: the {'dense' if name == 'mix_shipped' else 'sparse'} run's learned rows "
                     f"equal {name}'s")
    hptest.check(not np.array_equal(both, learned_of["mix_shipped"][1]), "pretrained_sparse changes the sparse run")

# 3b. Validation losses: each validation point at or after origin + h is forecast by the learned level
# forecast of the run's validation curve (its validation losses read step by step), from 20 entries of
# that curve on; before that, as the validation level (log mean of the newest 3 points) moved by the
# learned change of the training level. Rebuilt here: the point, target and level, and the earlier rule
# (validation every 10 steps, origins every 20: the point is exactly origin + h, so the change equals
# learned - last of the training rows). Two properties of the later rule: it reads no training loss
# (tripling every one leaves those rows bit-identical) and no validation loss measured after the origin.
vcurves = os.path.join(a.work, "vcurves.h5")
write_corpus(vcurves, runs=3, steps=300, val_every=10)
T = 150


def scaled_copy(name, dataset, factor):
    """vcurves with every value of `dataset` times factor(its step)."""
    path = os.path.join(a.work, name)
    shutil.copy(vcurves, path)
    with h5py.File(path, "r+") as f:
        for g in f["runs"].values():
            steps = g["val_step" if dataset == "val_loss" else "step"][()]
            g[dataset][...] = factor(steps) * g[dataset][()]
    return path


# The training losses tilted (x1 at the first step to x3 at the last: a uniform factor would leave
# every change of log loss, and so the earlier rule too, as it was); validation losses after T tripled.
val_out = {}
for name, path in (("fc_val", vcurves),
                   ("fc_val_train3", scaled_copy("vtrain3.h5", "loss", lambda s: 3.0 ** (s / s.max()))),
                   ("fc_val_late3", scaled_copy("vlate3.h5", "val_loss", lambda s: np.where(s > T, 3.0, 1.0)))):
    r = hptest.run(a.hpt, fdeck, f"forecast.input={path}", f"output.name={name}", "forecast.stop_on=validation")
    hptest.check(r.returncode == 0 and "validation loss" in r.stdout, f"{name}: forecast with validation losses",
                 r.stdout[-800:] + r.stderr[-600:])
    val_out[name] = os.path.join(out, name + ".h5")
vfile = val_out["fc_val"]
if all(os.path.exists(p) for p in val_out.values()):
    with h5py.File(vfile, "r") as f, h5py.File(vcurves, "r") as c:
        v = {k: f["validation/" + k][()] for k in f["validation"].keys()}
        ids = {int(g.attrs["index"]): g.attrs["id"] for g in f["runs"].values()}
        rows = {(int(r_), int(o), int(h)): i for i, (r_, o, h) in
                enumerate(zip(f["forecasts/run"][()], f["forecasts/origin"][()], f["forecasts/horizon"][()]))}
        learned, last = f["baselines/learned/forecast"][()], f["baselines/last/forecast"][()]
        worst = {"step": 0, "target": 0.0, "last": 0.0, "change": 0.0}
        by_curve = np.zeros(len(v["run"]), dtype=bool)
        for i in range(len(v["run"])):
            run_id = ids[int(v["run"][i])]
            vs, vl = c[f"runs/{run_id}/val_step"][()], c[f"runs/{run_id}/val_loss"][()]
            o, h = int(v["origin"][i]), int(v["horizon"][i])
            want_step = vs[vs >= o + h][0]
            worst["step"] = max(worst["step"], abs(int(v["val_step"][i]) - int(want_step)))
            worst["target"] = max(worst["target"], abs(v["target"][i] - np.log(vl[vs == want_step][0])))
            worst["last"] = max(worst["last"], abs(v["last"][i] - np.log(np.mean(vl[vs <= o][-3:]))))
            by_curve[i] = vs[vs <= o][-1] - vs[0] + 1 >= 20  # entries of the curve up to its newest point
            if not by_curve[i]:
                j = rows[(int(v["run"][i]), o, h)]
                worst["change"] = max(worst["change"], abs((v["forecast"][i] - v["last"][i]) - (learned[j] - last[j])))
        hptest.check(worst["step"] == 0 and max(worst["target"], worst["last"], worst["change"]) < 1e-9 and
                     by_curve.any() and (~by_curve).any(),
                     "validation rows: point, target, level and the earlier rule rebuilt here", str(worst))
        hptest.check(np.all((v["q05"] <= v["forecast"]) & (v["forecast"] <= v["q95"])),
                     "validation forecasts inside their intervals")
        for k, h in enumerate(f.attrs["horizons"]):
            sel = v["horizon"] == h
            hptest.check(abs(v["learned_mean_error"][k] - np.mean(np.abs(v["forecast"][sel] - v["target"][sel]))) < 1e-12,
                         f"validation mean error at h = {h} is the rows' mean")
        fin = [abs(g.attrs["final_log_loss"] - np.log(np.mean(c[f"runs/{g.attrs['id']}/val_loss"][()][-3:])))
               for g in f["runs"].values()]
        hptest.check(max(fin) < 1e-12, "stop_on = validation: a run's final level is its validation level")
    cols = ("forecast", "q05_raw", "q95_raw")
    with h5py.File(val_out["fc_val_train3"], "r") as g:
        same = all(np.array_equal(v[k][by_curve], g["validation/" + k][()][by_curve]) for k in cols)
        moved = not np.allclose(v["forecast"][~by_curve], g["validation/forecast"][()][~by_curve])
    hptest.check(same and moved, "validation forecasts from the curve read no training loss (the earlier rule does)")
    with h5py.File(val_out["fc_val_late3"], "r") as g:
        early = v["origin"] <= T
        same = all(np.array_equal(v[k][early], g["validation/" + k][()][early]) for k in cols)
        late_moved = not np.allclose(v["forecast"][~early], g["validation/forecast"][()][~early])
    hptest.check(early.any() and same and late_moved,
                 "no validation forecast reads a validation loss measured after its origin")
r = hptest.run(a.hpt, fdeck, "output.name=fc_noval", "forecast.stop_on=validation")
hptest.check(r.returncode == 2 and "forecast.stop_on = validation" in r.stderr and "no validation losses" in r.stderr
             and not os.path.exists(os.path.join(out, "fc_noval.h5")), "stop_on = validation without them: exit 2",
             r.stderr)

# 3c. A final-level model (pretrain.target = end) and the stop list that uses it (forecast.final_model).
r = hptest.run(a.hpt, deck, "pretrain.split=", "pretrain.target=end", "output.name=end")
end_model = os.path.join(out, "end.h5")
hptest.check(r.returncode == 0 and "\n    end " in r.stdout and os.path.exists(end_model),
             "pretrain.target = end fits a final-level model (one in-sample row, end)",
             r.stdout[-600:] + r.stderr[-600:])


def fnv1a(arrays):
    h = 14695981039346656037
    for w in arrays:
        for byte in np.asarray(w, dtype="<f8").tobytes():
            h = ((h ^ byte) * 1099511628211) % (1 << 64)
    return h - (1 << 64) if h >= (1 << 63) else h


if os.path.exists(end_model):
    with h5py.File(end_model, "r") as f:
        g = f["level_model"]
        hptest.check(g.attrs["target"] == "end" and g.attrs["end_from"] == 0.05 and g.attrs["end_to"] == 0.95,
                     "the file records its target and its origins' span")
    # The same file with the bias alone (median 0.1, quantiles -0.2 and +0.3): each run's forecast final level
    # at the stop list's origin is then its level there (log mean of the newest 10 losses) + 0.1.
    bias_model = os.path.join(a.work, "end-bias.h5")
    shutil.copy(end_model, bias_model)
    with h5py.File(bias_model, "a") as f:
        g = f["level_model"]
        sets = {}
        for k, b in (("median", 0.1), ("q05", -0.2), ("q95", 0.3)):
            w = np.zeros_like(g[k][()])
            w[0] = b
            g[k][...] = w
            sets[k] = w
        g.attrs.modify("checksum", np.int64(fnv1a([sets["median"], sets["q05"], sets["q95"]])))
    r = hptest.run(a.hpt, fdeck, "output.name=fc_final", f"forecast.final_model={bias_model}")
    hptest.check(r.returncode == 0 and "final-level forecaster of the stop list: " + bias_model in r.stdout,
                 "forecast.final_model names the model", r.stdout[-600:] + r.stderr[-600:])
    fc = os.path.join(out, "fc_final.h5")
    if os.path.exists(fc):
        with h5py.File(fc, "r") as f, h5py.File(curves, "r") as c:
            worst = 0.0
            for g in f["runs"].values():
                loss, steps = c[f"runs/{g.attrs['id']}/loss"][()], c[f"runs/{g.attrs['id']}/step"][()]
                n = int(np.searchsorted(steps, g.attrs["stop_origin"], side="right"))
                worst = max(worst, abs(g.attrs["stop_final"] - (np.log(np.mean(loss[n - 10:n])) + 0.1)))
            hptest.check(worst < 1e-12, "the stop list's final level is the final model's (rebuilt here)",
                         str(worst))

# 4. Bad inputs: exit 2, the key named, nothing written.
bad_out = os.path.join(a.work, "bad")
short = os.path.join(a.work, "short.h5")
write_corpus(short, runs=2, steps=25)
forecast_file = os.path.join(out, "fc_default.h5")


def damaged(name, edit):
    """A copy of the small model with `edit(group)` applied to /level_model (h5py), or truncated."""
    import shutil
    path = os.path.join(a.work, name)
    shutil.copy(small, path)
    if edit == "truncate":
        os.truncate(path, os.path.getsize(path) // 2)
    else:
        with h5py.File(path, "a") as f:
            edit(f["level_model"])
    return path


def set_nan(g):
    w = g["q05"][()]
    w[2] = np.nan
    del g["q05"]
    g["q05"] = w


def shorten(g):
    w = g["median"][()][:-1]
    del g["median"]
    g["median"] = w


bad_models = [
    (damaged("version.h5", lambda g: g.attrs.modify("version", 9)), ["version 9"]),
    (damaged("nan.h5", set_nan), ["q05", "NaN"]),
    (damaged("shape.h5", shorten), ["median"]),
    (damaged("truncated.h5", "truncate"), ["truncated.h5"]),
]
CASES = [
    (deck, ["pretrain.input="], ["pretrain.input is empty"]),
    (deck, [f"pretrain.input={a.work}/missing.h5"], ["missing.h5"]),
    (deck, ["pretrain.split=validation"], ["pretrain.split = 'validation'", "no run"]),
    (deck, [f"pretrain.input={short}", "pretrain.split="], ["pretrain.input", "long enough"]),
    (deck, ["pretrain.horizons=50,10"], ["pretrain.horizons", "10,25,50"]),
    (deck, ["pretrain.logged_every_runs=1"], ["pretrain.logged_every_runs = 1", "2 to 100"]),
    (deck, ["pretrain.recorded_runs=off"], ["pretrain.recorded_runs = off", "no curve"]),
    (deck, ["pretrain.target=end", "pretrain.end_from=0.6", "pretrain.end_to=0.5"],
     ["pretrain.end_from = 0.6", "pretrain.end_to = 0.5", "end_from < end_to"]),
    (fdeck, [f"forecast.final_model={shipped}"], ["forecast.final_model = '", "expected a final-level model"]),
    (fdeck, [f"forecast.pretrained={end_model}"], ["forecast.pretrained = '", "holds a final-level model"]),
    (fdeck, ["forecast.pretrained=none", f"forecast.final_model={end_model}"],
     ["forecast.final_model = '", "forecast.stop_by = learned"]),
    (fdeck, [f"forecast.pretrained={a.work}/missing.h5"], ["forecast.pretrained = '", "missing.h5"]),
    (fdeck, ["forecast.pretrained=none", f"forecast.pretrained_sparse={shipped}"],
     ["forecast.pretrained_sparse = '", "forecast.pretrained model"]),
    (fdeck, [f"forecast.pretrained_sparse={a.work}/missing.h5"], ["forecast.pretrained_sparse = '", "missing.h5"]),
    (fdeck, [f"forecast.pretrained={forecast_file}"], ["forecast.pretrained = '", "forecast"]),
] + [(fdeck, [f"forecast.pretrained={p}"], ["forecast.pretrained = '" + p] + n) for p, n in bad_models]
# Training with the learned forecaster reads the same model, checked before any work.
tdeck = hptest.deck_path(a.root, "xor.ini")
LEARNED = ["train.forecaster=true", "train.forecast_style=learned", "forecast.horizons=10,20"]
CASES += [
    (tdeck, LEARNED + ["forecast.pretrained=none"], ["train.forecast_style = learned", "forecast.pretrained"]),
    (tdeck, LEARNED + [f"forecast.pretrained={bad_models[1][0]}"], ["forecast.pretrained = '", "NaN"]),
]
for i, (d, sets, needles) in enumerate(CASES):
    o = os.path.join(bad_out, str(i))
    r = hptest.run(a.hpt, d, f"output.dir={o}", *sets)
    missing = [n for n in needles if n not in r.stderr]
    hptest.check(r.returncode == 2 and not missing and not os.path.exists(o),
                 f"bad input {sets}: exit 2 naming {needles}, nothing written",
                 f"rc {r.returncode}, missing {missing}: {r.stderr[-500:]}")
r = hptest.run(a.hpt, fdeck, f"output.dir={bad_out}/env", env={"HPT_MODELS_DIR": a.work})
hptest.check(r.returncode == 2 and "forecast.pretrained" in r.stderr and a.work in r.stderr,
             "HPT_MODELS_DIR without a model: exit 2 naming forecast.pretrained and the path", r.stderr[-400:])
hptest.finish()
