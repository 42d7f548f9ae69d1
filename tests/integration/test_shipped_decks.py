"""The binary on every deck in inputs/ (shortened by --set where a deck is long) and the files it writes: exit
code 0, HDF5 outputs that open in h5py with the hpt attributes, the resolved deck stored, and sane contents."""
import os

import numpy as np

import hptest

a = hptest.args()
h5py = hptest.h5()
inp = lambda n: hptest.deck_path(a.root, n)
out = os.path.join(a.work, "out")


def header_ok(path, kind):
    with h5py.File(path, "r") as f:
        at = f.attrs
        return (at["hpt_kind"] == kind and int(at["hpt_format_version"]) == 1 and "[run]" in at["hpt_deck"]
                and len(at["hpt_backend"]) > 0)


# quickstart (the README's first command), shortened to 600 steps and one budget rate so that it also fits the
# sanitizer builds' time: the hybrid run against the other three arms, with the skip ratio and where the plot is.
r = hptest.run(a.hpt, inp("quickstart.ini"), f"output.dir={out}", "train.steps=600", "compare.budget_lr_factors=1",
               "compare.seeds=1")
hptest.check(r.returncode == 0, "quickstart runs", r.stderr[-600:])
hptest.check("skip ratio" in r.stdout and "compare (1 seed" in r.stdout and "run/post/hpt-plot" in r.stdout,
             "quickstart prints the skip ratio, the comparison table and the plot command", r.stdout[-1200:])
q = os.path.join(out, "quickstart_compare.h5")
hptest.check(os.path.exists(q) and header_ok(q, "compare"), "quickstart_compare.h5 has the hpt attributes")

# the second quickstart deck (where hybrid training does not pay), shortened: it compares the four arms.
r = hptest.run(a.hpt, inp("quickstart-adam.ini"), f"output.dir={out}", "train.steps=300",
               "compare.budget_lr_factors=1")
hptest.check(r.returncode == 0 and "compare (1 seed" in r.stdout, "quickstart-adam compares the four arms",
             r.stderr[-600:] + r.stdout[-600:])

# the synthetic-curve rollout: paths and statistics.
r = hptest.run(a.hpt, inp("rollout-synthetic.ini"), f"output.dir={out}", f"rollout.save_model={out}/model.h5")
hptest.check(r.returncode == 0, "rollout-synthetic runs", r.stderr[-600:])
hptest.check("resolved configuration" in r.stdout and "rollout:" in r.stdout,
             "rollout-synthetic prints header and summary")
q = os.path.join(out, "rollout-synthetic.h5")
if os.path.exists(q):
    hptest.check(header_ok(q, "rollout"), "rollout-synthetic.h5 has the hpt attributes")
    with h5py.File(q, "r") as f:
        p = f["paths"][()]
        hptest.check(p.shape == (64, 5, 51), f"paths shape (N, E, Y+1) = {p.shape}")
        hptest.check(np.all(np.isfinite(p)) and np.all(p > 0), "paths finite and positive")
        hptest.check(np.allclose(p[:, :, 0], p[0, 0, 0]), "every path starts at the current loss")
        qs = f["stats/loss_quantiles"][()]
        hptest.check(np.all(qs[:, 0] <= qs[:, 1]) and np.all(qs[:, 1] <= qs[:, 2]), "quantiles ordered")
        ref = np.quantile(p.reshape(-1, p.shape[2]), [0.05, 0.5, 0.95], axis=0).T
        hptest.check(np.allclose(qs, ref, rtol=1e-5, atol=1e-6), "quantiles equal numpy's on the written paths")
        hptest.check(np.allclose(f["stats/mean_loss"][()], p.reshape(-1, p.shape[2]).mean(0), rtol=1e-5),
                     "mean path equals the mean of the written paths")
        feats = f["features"][()]
        hptest.check(feats.shape == (1, 64) and np.all(np.isfinite(feats)), "64 finite features")

# rollout from the model file the synthetic rollout saved.
r = hptest.run(a.hpt, inp("rollout.ini"), f"output.dir={out}", f"rollout.model={out}/model.h5",
               "rollout.horizon=20", "rollout.scenarios=16")
hptest.check(r.returncode == 0, "rollout.ini runs from the saved model", r.stderr[-600:])
if os.path.exists(os.path.join(out, "model.h5")):
    hptest.check(header_ok(os.path.join(out, "model.h5"), "model"), "model.h5 has the hpt attributes")

# bench, shortened.
r = hptest.run(a.hpt, inp("bench-cpu.ini"), f"output.dir={out}", "bench.sizes=prototype",
               "bench.training_sizes=forecast", "bench.encoder_runs=1,64", "bench.repeat=1", "bench.warmup=0",
               "bench.copy_mb=8")
hptest.check(r.returncode == 0, "bench-cpu.ini runs (shortened)", r.stderr[-600:])
csv = os.path.join(out, "bench-cpu.csv")
if os.path.exists(csv):
    rows = [x.split(",") for x in open(csv).read().strip().splitlines()]
    head = rows[0]
    kernels = [x[head.index("kernel")] for x in rows[1:]]
    hptest.check(len(rows) == 1 + 2 + 1 + 4,
                 f"bench CSV has rollout, gru_step, train_step and 4 encoder rows ({kernels})")
    checked = [x for x in rows[1:] if x[head.index("kernel")] != "train_step"]
    devs = [float(x[head.index("max_deviation")]) for x in checked]
    hptest.check(all(0 <= d < 1e-3 for d in devs), f"every checked bench row agrees with the host reference: {devs}")
    # The training step of size forecast (E 4, H 32, S 8, I 64, K 16): GFLOP/s times the median is the
    # docs/bench.md#flop-counts count, here from the tensor shapes: 2 FLOPs per weight and member-sample
    # forward, three forwards with the backward.
    train = [x for x in rows[1:] if x[head.index("kernel")] == "train_step"]
    if train:
        E, H, S, I, K = 4, 32, 8, 64, 16
        weights = E * (3 * H * I + 3 * H * H + 2 * S * H + 2 * (H + S))
        flops = float(train[0][head.index("gflops")]) * 1e9 * float(train[0][head.index("median_s")])
        hptest.check(abs(flops / (3 * 2 * weights * K) - 1) < 1e-4 and train[0][head.index("Y")] == str(K),
                     f"train_step row counts {3 * 2 * weights * K} FLOPs over a window of {K}",
                     f"{flops:.6g} FLOPs, Y {train[0][head.index('Y')]}")
    hptest.check(header_ok(os.path.join(out, "bench-cpu.h5"), "bench"), "bench-cpu.h5 has the hpt attributes")

# bench with every rollout kernel named at one size: each that can run it is timed once (auto is
# tiled-1 there), each agrees with the host reference; the persistent one cannot run on a CPU. The
# same for the rich encoder's layouts at two run counts, one of them a partial tile of 32.
r = hptest.run(a.hpt, inp("bench-cpu.ini"), f"output.dir={out}", "output.name=kernels", "bench.sizes=small",
               "bench.training_sizes=",
               "bench.rollout_kernels=auto,tiled-1,team-per-path,gemm,persistent", "bench.encoder_runs=1,40",
               "bench.encoder_styles=rich", "bench.encoder_layouts=auto,thread,series,team",
               "bench.repeat=1", "bench.warmup=0", "bench.copy_mb=8")
hptest.check(r.returncode == 0, "bench with bench.rollout_kernels runs", r.stderr[-600:])
csv = os.path.join(out, "kernels.csv")
if os.path.exists(csv):
    rows = [x.split(",") for x in open(csv).read().strip().splitlines()]
    kcol, dcol = rows[0].index("kernel"), rows[0].index("max_deviation")
    kernels = [x[kcol] for x in rows[1:]]
    layouts = [f"encode_rich_raw/{l}" for l in ("thread", "series", "team")]  # auto is thread on a CPU
    hptest.check(kernels == ["rollout/tiled-1", "rollout/team-per-path", "rollout/gemm", "gru_step", "encode_rich",
                             "encode_rich"] + layouts + layouts,
                 f"one row per kernel that can run the size and per encoder layout and R, auto not repeated ({kernels})")
    devs = [float(x[dcol]) for x in rows[1:]]
    hptest.check(all(0 <= d < 1e-3 for d in devs), f"every kernel agrees with the host reference: {devs}")
hptest.check("rollout/persistent cannot run size small" in r.stdout, "the persistent kernel is skipped with a note",
             r.stdout[-400:])

# training decks, shortened.
for deck, sets in [("xor.ini", ["train.steps=100"]),
                   ("digits.ini", ["train.steps=250", "checkpoint.every=100"]),
                   ("digits-baseline.ini", ["train.steps=150", "checkpoint.every=100"]),
                   ("teacher-large.ini", ["dataset.samples=512", "dataset.teacher_layers=16,32,10",
                                          "model.layers=16,32,10", "train.steps=80", "train.batch_size=32",
                                          "schedule.warmup=5", "optimizer.lr=0.01", "checkpoint.every=40"])]:
    name = deck[:-4]
    r = hptest.run(a.hpt, inp(deck), f"output.dir={out}", *sets)
    hptest.check(r.returncode == 0, f"{deck} runs (shortened)", r.stderr[-600:])
    tr = os.path.join(out, f"{name}_trace.h5")
    if os.path.exists(tr):
        hptest.check(header_ok(tr, "trace"), f"{name}_trace.h5 has the hpt attributes")
        with h5py.File(tr, "r") as f:
            steps = f["steps/step"][()]
            loss = f["steps/loss"][()]
            hptest.check(len(steps) > 0 and steps[0] == 1 and np.all(np.diff(steps) == 1), f"{name}: trace steps 1..n")
            hptest.check(np.all(np.isfinite(loss)), f"{name}: finite losses")
            hptest.check(loss[-10:].mean() < loss[:10].mean(), f"{name}: the loss decreases")
# the tuned decks with their hybrid configuration, shortened to one seed: the comparison runs and tries blocks.
# A GPU-sized deck also gets a small network and dataset.
smaller = {"teacher-large-mse-trend.ini": ["dataset.samples=4096", "dataset.teacher_layers=64,64,64,10",
                                           "model.layers=64,64,64,10"]}
hybrid_decks = os.path.join(a.root, "inputs/reference/tuned/hybrid")
for deck in sorted(os.listdir(hybrid_decks)):
    name = deck[:-4]
    r = hptest.run(a.hpt, os.path.join(hybrid_decks, deck), f"output.dir={out}", "train.steps=400",
                   "compare.seeds=41", "compare.budget_lr_factors=1", *smaller.get(deck, []), extra=("--compare",))
    hptest.check(r.returncode == 0, f"tuned/hybrid/{deck} compares (shortened)", r.stderr[-600:])
    q = os.path.join(out, f"{name}_compare.h5")
    if os.path.exists(q):
        with h5py.File(q, "r") as f:
            h = f["seeds/41/hybrid"].attrs
            tried = h["blocks_accepted"] + h["blocks_rolled_back"]
        hptest.check(header_ok(q, "compare") and tried > 0, f"tuned/hybrid/{deck}: the hybrid arm tries blocks ({tried})")
# --help: every section and key documented with its default; value ranges only on numeric options.
import subprocess
h = subprocess.run([a.hpt, "--help"], capture_output=True, text=True, timeout=60)
hptest.check(h.returncode == 0 and "[rollout]" in h.stdout and "horizon = 50" in h.stdout, "--help lists the options")
hptest.check("in [0, 0]" not in h.stdout, "--help gives no range to string, boolean or choice options")
hptest.finish()
