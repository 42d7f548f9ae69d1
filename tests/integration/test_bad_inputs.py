"""Inputs an independent tester found mishandled: each must end with exit code 2 before any work, with one message
naming the culprit, and leave nothing behind (no output file, no empty output folder): sizes that cannot fit in
memory, unwritable output locations in rollout and bench modes, model files with a non-finite or edited weight,
decks that are folders, devices or hold NUL bytes, two decks, non-numeric Kokkos counts, a data folder given as a
file, a label that does not fit the model, an output that is the run's input file. Also: a BOM before the first key
is ignored, and temporaries left by killed processes are removed by the next run."""
import hashlib
import os
import shutil
import subprocess

import numpy as np

import hptest

a = hptest.args()
h5py = hptest.h5()
xor = hptest.deck_path(a.root, "xor.ini")
quick = hptest.deck_path(a.root, "rollout-synthetic.ini")
bench = hptest.deck_path(a.root, "bench-cpu.ini")
small_rollout = ["rollout.horizon=3", "rollout.scenarios=2", "dynamics.hidden=8"]


def refused(name, deck, sets, needles, out, extra=()):
    """Runs hpt; checks exit 2, the message names every needle, nothing was started or written under `out`."""
    r = hptest.run(a.hpt, deck, *sets, f"output.dir={out}", extra=extra, timeout=120)
    hptest.check(r.returncode == 2, f"{name}: exit code 2", f"got {r.returncode}: {r.stderr[-600:]}")
    missing = [n for n in needles if n not in r.stderr]
    hptest.check(not missing, f"{name}: message names {needles}", f"missing {missing} in: {r.stderr.strip()}")
    hptest.check(r.stderr.count("\n") <= 4, f"{name}: one short message", r.stderr)
    hptest.check(not os.path.exists(out), f"{name}: no output folder created", str(os.listdir(out))
                 if os.path.isdir(out) else "")
    progress = any(line.startswith("step ") for line in r.stdout.splitlines())
    hptest.check("rollout:" not in r.stdout and not progress and "wrote" not in r.stdout,
                 f"{name}: no work done", r.stdout[-300:])
    return r


def out(name):
    return os.path.join(a.work, "out_" + name)


# Sizes that cannot fit in memory on any node (defect 2): tens of TB and more, so the cases hold on large hosts too.
refused("huge model", xor, ["model.layers=2,1000000,1000000,2"], ["model.layers", "bytes", "available"], out("m1"))
# About 2.2 PB of rows (2e9 x 100000 features).
refused("huge data set", xor, ["dataset.style=teacher", "dataset.teacher_layers=100000,8,1",
                               "dataset.samples=2000000000", "model.layers=100000,8,1"],
        ["dataset.samples = 2000000000", "dataset.teacher_layers = 100000,8,1", "available"], out("m2"))
refused("huge rollout", quick, ["rollout.scenarios=16777216", "dynamics.members=1024"],
        ["rollout.scenarios = 16777216", "dynamics.members = 1024", "available"], out("m3"))
refused("huge hidden state", quick, ["dynamics.hidden=16384", "dynamics.members=1024"],
        ["dynamics.hidden = 16384", "available"], out("m4"))
big = os.path.join(a.work, "declares_huge.h5")
with h5py.File(big, "w") as f:  # declares 10^8 x 1000 without storing it (chunked, unwritten)
    f.create_dataset("X", shape=(10 ** 8, 1000), dtype="f8", chunks=(1000, 100))
    f.create_dataset("y", shape=(10 ** 8,), dtype="i8", chunks=(10000,))
refused("HDF5 declaring 10^8 x 1000", xor, ["dataset.style=hdf5", f"dataset.path={big}", "model.layers=1000,8,2"],
        ["dataset.path", "100000000 x 1000", "available"], out("m5"))

refused("huge forecaster in training", xor, ["train.forecaster=true", "dynamics.hidden=16384",
                                             "dynamics.members=64"],
        ["train.forecaster", "dynamics.hidden = 16384", "available"], out("m6"))

# Held-out fractions that leave no training rows, in train and compare mode.
for mode, extra in (("train", ()), ("compare", ("--compare",))):
    refused(f"{mode}: validation and probe parts cover every row", xor,
            ["dataset.val_fraction=0.5", "dataset.probe_fraction=0.5", "train.hybrid=on"],
            ["dataset.probe_fraction = 0.5", "dataset.val_fraction = 0.5", "no training rows"], out("f" + mode),
            extra=extra)

# Output locations are checked before any work (defect 3).
refused("rollout into an unwritable folder", quick, small_rollout, ["output.dir", "/proc/hpt-out"],
        "/proc/hpt-out")
refused("rollout.save_model in a missing folder", quick,
        small_rollout + [f"rollout.save_model={a.work}/missing/m.h5"], ["rollout.save_model", "missing"], out("o2"))
refused("rollout.save_model is a folder", quick, small_rollout + [f"rollout.save_model={a.work}"],
        ["rollout.save_model", "folder"], out("o3"))
refused("bench into an unwritable folder", bench, ["bench.sizes=small"], ["output.dir", "/proc"], "/proc/hpt-b")
refused("bench with an unknown rollout kernel", bench, ["bench.rollout_kernels=auto,fastest"],
        ["bench.rollout_kernels", "fastest", "gemm"], out("b2"))
refused("bench with an unknown encoder layout", bench, ["bench.encoder_layouts=thread,diagonal"],
        ["bench.encoder_layouts", "diagonal", "series"], out("b3"))
refused("bench with an unknown training size", bench, ["bench.training_sizes=default,huge"],
        ["bench.training_sizes", "huge", "e64"], out("b4"))
blocker = os.path.join(a.work, "a_file")
open(blocker, "w").close()
refused("output.dir below a file", xor, [], ["output.dir", "a_file", "not a folder"], blocker + "/sub")

# Model files: checksum and finite weights (defect 4).
mdir = out("model")
r = hptest.run(a.hpt, quick, *small_rollout, f"output.dir={mdir}", f"rollout.save_model={mdir}/m.h5")
hptest.check(r.returncode == 0, "model file written", r.stderr[-300:])
for case in ("nan", "edited"):
    bad = os.path.join(a.work, f"model_{case}.h5")
    with open(os.path.join(mdir, "m.h5"), "rb") as f, open(bad, "wb") as g:
        g.write(f.read())
    with h5py.File(bad, "r+") as f:
        name = sorted(f["dynamics"].keys())[0]
        v = f["dynamics"][name][()]
        v.flat[3] = np.nan if case == "nan" else v.flat[3] + 0.5
        f["dynamics"][name][...] = v
    needles = ["rollout.model", bad] + ([name, "NaN"] if case == "nan" else ["checksum"])
    refused(f"model file with a {case} weight", quick, small_rollout + [f"rollout.model={bad}"], needles,
            out("m" + case))

# Decks (defects 5, 6 and the command line).
refused("deck is a folder", a.work, ["run.mode=rollout"] + small_rollout, ["deck", a.work, "directory"], out("d1"))
refused("deck is /dev/zero", "/dev/zero", [], ["deck", "/dev/zero", "regular file"], out("d2"))
nul = os.path.join(a.work, "nul.ini")
with open(nul, "wb") as f:
    f.write(f"[run]\nmode = rollout\n[output]\ndir = {out('d3')}\n[optimizer]\nlr = 0.05\0junk\n".encode())
refused("NUL byte in a value", nul, [], ["nul.ini", "line 6", "NUL"], out("d3"))
refused("two decks", xor, [], ["two input decks"], out("d4"), extra=["-i", quick])
refused("non-numeric Kokkos thread count", xor, [], ["--kokkos-num-threads", "abc"], out("d5"),
        extra=["--kokkos-num-threads=abc"])
bom = os.path.join(a.work, "bom.ini")
with open(bom, "wb") as f:
    f.write(b"\xef\xbb\xbf[run]\nmode = rollout\n[rollout]\nhorizonn = 3\n")
r = refused("BOM then a misspelt key", bom, [], ["rollout.horizonn"], out("d6"))
hptest.check("\ufeff" not in r.stderr and "\xef" not in r.stderr, "BOM: not part of any key in the message",
             repr(r.stderr))
with open(bom, "wb") as f:
    f.write(b"\xef\xbb\xbf[run]\nmode = rollout\n")
r = hptest.run(a.hpt, bom, *small_rollout, f"output.dir={out('d7')}")
hptest.check(r.returncode == 0, "a deck starting with a BOM runs", r.stderr[-300:])

# A refused run leaves no empty output folder (defect 7), and data messages name the culprit.
refused("model that does not fit the data", xor, ["model.layers=3,32,2"], ["model.layers", "3,32,2"], out("e1"))
refused("dataset.path is a folder", xor, ["dataset.style=hdf5", f"dataset.path={a.work}"],
        ["dataset.path", "is a directory"], out("e2"))
lab = os.path.join(a.work, "labels.h5")
with h5py.File(lab, "w") as f:
    f["X"] = np.random.default_rng(1).normal(size=(40, 2))
    y = np.zeros(40, dtype=np.int64)
    y[17] = 5
    f["y"] = y
refused("label out of the model's range", xor, ["dataset.style=hdf5", f"dataset.path={lab}"],
        ["model.layers", "row 17", "labels.h5"], out("e3"))

# Temporaries of processes that no longer run are removed by the next run of the same name.
tdir = out("tmp")
os.makedirs(tdir)
p = subprocess.run(["true"])  # a finished process: its pid is free (or reused by a live one, then kept)
dead = subprocess.Popen(["true"])
dead.wait()
stale = os.path.join(tdir, f"rollout-synthetic.h5.tmp.{dead.pid}")
foreign = os.path.join(tdir, f"other.h5.tmp.{dead.pid}")
for path in (stale, foreign):
    open(path, "w").close()
r = hptest.run(a.hpt, quick, *small_rollout, f"output.dir={tdir}")
hptest.check(r.returncode == 0 and not os.path.exists(stale) and "removed" in r.stdout,
             "stale temporary of a dead process removed, with a note", r.stdout[-300:])
hptest.check(os.path.exists(foreign), "another run's temporary is left alone")

# An output that is the input file (found while scoring a curve file in its own folder): refused before any work, the
# input left byte for byte as it was, nothing else written beside it. The second name reaches the same file by a link.
same = out("same")
os.makedirs(same)
curves = os.path.join(same, "sweep.h5")
shutil.copy(os.path.join(a.root, "tests", "data", "curves", "hpt-sweep.h5"), curves)
os.symlink(curves, os.path.join(same, "linked.h5"))
digest = hashlib.sha256(open(curves, "rb").read()).hexdigest()
forecast_deck = hptest.deck_path(a.root, "forecast.ini")
pretrain_deck = hptest.deck_path(a.root, "pretrain.ini")
for label, deck, key, name in (("forecast", forecast_deck, "forecast.input", "sweep"),
                               ("forecast by a link", forecast_deck, "forecast.input", "linked"),
                               ("pretrain", pretrain_deck, "pretrain.input", "sweep")):
    sets = [f"{key}={curves}", f"output.dir={same}", f"output.name={name}"]
    if label == "pretrain":
        sets += ["pretrain.split="]
    r = hptest.run(a.hpt, deck, *sets, timeout=120)
    hptest.check(r.returncode == 2 and "output.name" in r.stderr and key in r.stderr and "sweep.h5" in r.stderr,
                 f"{label}: output onto its input refused (exit 2, names output.name, {key}, the file)",
                 f"{r.returncode}: {r.stderr[-400:]}")
    hptest.check(hashlib.sha256(open(curves, "rb").read()).hexdigest() == digest
                 and sorted(os.listdir(same)) == ["linked.h5", "sweep.h5"],
                 f"{label}: the input unchanged, nothing written beside it", str(os.listdir(same)))

hptest.finish()
