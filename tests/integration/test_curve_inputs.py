"""Curve files as they come (run.mode = forecast): the battery of CSV and HDF5 inputs, each either read
(exit 0, the runs' ids verbatim in the output, the notes that say what was changed) or refused before
any work (exit 2, a message naming the file and what is wrong, nothing written); and kill -9 during
forecast mode, which leaves either no output file or the previous complete one."""
import os
import signal
import subprocess

import numpy as np

from hptest import args, check, deck_path, finish, h5, run

a = args()
deck = deck_path(a.root, "forecast.ini")
SMALL = ["forecast.horizons=5,10", "forecast.every=5", "forecast.scenarios=4", "dynamics.members=2",
         "dynamics.hidden=8", "dynamics.stochastic=2", "forecast.train_runs=1"]
os.makedirs(a.work, exist_ok=True)


def curve(n, start=2.0, seed=0):
    rng = np.random.default_rng(seed)
    return start * np.exp(-np.arange(n) / 30.0) * (1 + 0.02 * rng.standard_normal(n)) + 0.1


def csv_text(runs, header="run,step,loss", extra=lambda run, step: ""):
    lines = [header]
    for rid, loss in runs.items():
        for i, v in enumerate(loss):
            lines.append(f"{rid},{i + 1},{float(v)!r}{extra(rid, i + 1)}")  # numpy 2: no np.float64()
    return "\n".join(lines) + "\n"


def write(name, data):
    path = os.path.join(a.work, name)
    if isinstance(data, bytes):
        with open(path, "wb") as fh:
            fh.write(data)
    else:
        with open(path, "w", newline="", encoding="utf-8") as fh:
            fh.write(data)
    return path


def write_h5(name, runs, attrs=None):
    path = os.path.join(a.work, name)
    with h5().File(path, "w") as f:
        for gname, series in runs.items():
            g = f.create_group("runs/" + gname)
            for k, v in series.items():
                g[k] = np.asarray(v)
            for k, v in (attrs or {}).get(gname, {}).items():
                g.attrs[k] = v
    return path


def forecast(path, tag, *sets):
    out = os.path.join(a.work, "out_" + tag)
    r = run(a.hpt, deck, f"forecast.input={path}", f"output.dir={out}", "output.name=fc", *SMALL,
            *sets)
    return r, out


def read_ok(tag, path, ids, notes=(), *sets):
    r, out = forecast(path, tag, *sets)
    check(r.returncode == 0, f"{tag}: read (exit 0)", r.stdout[-2000:] + r.stderr[-2000:])
    if r.returncode != 0:
        return
    with h5().File(os.path.join(out, "fc.h5"), "r") as f:
        got = sorted(str(g.attrs["id"]) for g in f["runs"].values())
    check(got == sorted(ids), f"{tag}: every run's id verbatim in the output", f"{got} vs {ids}")
    for n in notes:
        check(n in r.stdout, f"{tag}: note '{n}'", r.stdout[-2000:])


def refused(tag, path, parts, *sets):
    r, out = forecast(path, tag, *sets)
    check(r.returncode == 2, f"{tag}: exit 2", f"rc={r.returncode} " + r.stderr[-2000:])
    msg = r.stderr
    missing = [p for p in parts if p not in msg]
    check(not missing, f"{tag}: the message names {parts}", msg[-2000:])
    check(not os.path.exists(out), f"{tag}: nothing written")


good = {"a": curve(40, seed=1), "b": curve(40, 3.0, seed=2)}

# ---- CSV read as real exports come
read_ok("csv extra columns", write("extra.csv", csv_text(
    good, "run,step,loss,epoch,wall_time", lambda r, s: f",{s // 10},{s * 0.1}")), ["a", "b"],
    ["columns ignored", "'epoch'", "'wall_time'"])
crlf = csv_text(good).replace("\n", "\r\n")
read_ok("csv BOM and CRLF", write("bom.csv", b"\xef\xbb\xbf" + crlf.encode()), ["a", "b"])
odd = {"lr=0.1/bs 32": curve(40, seed=3), "réseau ü": curve(40, seed=4), 'say "hi", ok': curve(40)}
lines = ["step,run,loss"]
for rid, loss in odd.items():
    quoted = '"' + rid.replace('"', '""') + '"'
    lines += [f"{i + 1},{quoted},{float(v)!r}" for i, v in enumerate(loss)]
read_ok("csv ids with '/', spaces, quotes and non-ASCII", write("ids.csv", "\n".join(lines) + "\n"),
        list(odd))
shuffled = csv_text(good).split("\n")
body = shuffled[1:-1]
body = body[20:] + body[:20] + body[5:8]  # out of order, and three steps twice
read_ok("csv unsorted and repeated steps", write("order.csv", "\n".join([shuffled[0]] + body) + "\n"),
        ["a", "b"], ["the steps were sorted", "repeated step"])
div = dict(good)
div["c"] = np.concatenate([curve(30, seed=5), [np.nan, 1.0]])
div["d"] = np.array([np.inf] + list(curve(39)))
read_ok("csv NaN and inf losses are divergences", write("div.csv", csv_text(div)), ["a", "b", "c"],
        ["run 'c' diverged at step 31", "run 'd' left out"])
read_ok("csv partial last line", write("partial.csv", csv_text(good) + "b,41"), ["a", "b"],
        ["no newline and is incomplete"])
read_ok("csv huge step numbers", write("huge.csv", "run,step,loss\n" + "\n".join(
    f"a,{10**15 + i},{float(v)!r}" for i, v in enumerate(curve(40))) + "\n"), ["a"])
read_ok("csv blank lines and one-step runs", write("one.csv", csv_text(
    {"a": curve(40), "single": [1.0]}).replace("\n", "\n\n")), ["a", "single"])

refused("csv empty", write("empty.csv", ""), ["empty.csv", "is empty", "run,step,loss"])
refused("csv header only", write("header.csv", "run,step,loss\n"), ["header.csv", "holds no runs"])
refused("csv missing loss column", write("noloss.csv", "run,step,acc\na,1,0.5\n"),
        ["noloss.csv", "missing column 'loss'"])
refused("csv row cut short inside the file", write("trunc.csv", "run,step,loss\na,1,0.9\na,2\na,3,0.8\n"),
        ["trunc.csv", "run 'a'", "line 3", "2 columns"])
refused("csv negative loss", write("neg.csv", "run,step,loss\na,1,-0.5\n"),
        ["neg.csv", "run 'a'", "line 2", "negative"])
refused("csv only one-step runs", write("tiny.csv", csv_text({"a": [1.0], "b": [2.0]})),
        ["forecast.horizons", "no run is long enough"])
many = "run,step,loss\n" + "".join(f"r{i},1,1.0\nr{i},2,0.9\n" for i in range(100000))
refused("csv 10^5 tiny runs", write("many.csv", many), ["forecast.horizons", "no run is long enough"])
# HDF5 with 10^4 tiny runs (10^5 reads the same way, at about 2 ms a run: docs/notes).
refused("hdf5 10^4 tiny runs", write_h5("many.h5", {f"r{i}": dict(step=np.array([1, 2]), loss=np.array([1.0, 0.9]))
                                                   for i in range(10000)}),
        ["forecast.horizons", "no run is long enough"])
refused("forecast.stop_at = 0", write("ok.csv", csv_text(good)),
        ["forecast.stop_at = 0", "between 0 and 1"], "forecast.stop_at=0")

# Groups keep problems apart: a run is judged against the best run of its own group only.
grouped = {"a1": curve(120, 0.2, 1), "a2": curve(120, 0.3, 2), "b1": curve(120, 20.0, 3) + 5,
           "b2": curve(120, 30.0, 4) + 8}
text = csv_text(grouped, "run,step,loss,group", lambda r, s: "," + r[0])
r, _ = forecast(write("groups.csv", text), "groups", "forecast.stop_at=0.5")
check(r.returncode == 0 and "stop 'b1'" not in r.stdout and "kept" in r.stdout,
      "groups: the best run of the worse group is not stopped for the other group's level",
      r.stdout[-1500:])

# ---- HDF5: the same rules
h5runs = {k: {"step": np.arange(1, 41), "loss": v} for k, v in good.items()}
read_ok("hdf5 extra datasets", write_h5("extra.h5", {k: dict(v, epoch=np.zeros(40))
                                                     for k, v in h5runs.items()}), ["a", "b"],
        ["dataset 'epoch' ignored"])
read_ok("hdf5 id attribute with '/' and non-ASCII", write_h5(
    "ids.h5", {"x": h5runs["a"], "y": h5runs["b"]},
    {"x": {"id": "sweep/lr=0.1"}, "y": {"id": "réseau ü"}}), ["sweep/lr=0.1", "réseau ü"])
# A dataset that declares 10^8 entries and stores none (a few bytes of file): refused at once, not
# filled entry by entry; with skip_bad_runs the run is skipped and the others read.
unwritten = write_h5("unwritten.h5", h5runs)
with h5().File(unwritten, "a") as f:
    f.create_group("runs/huge").create_dataset("step", shape=(10**8,), dtype="i8", chunks=(64,))
    f["runs/huge/loss"] = np.ones(3)
refused("hdf5 step declared but never written", unwritten,
        ["/runs/huge/step", "declares 100000000 entries but stores none"])
read_ok("hdf5 never-written run skipped", unwritten, ["a", "b"], (), "forecast.skip_bad_runs=true")
perm = np.r_[20:40, 0:20, 5:8]
read_ok("hdf5 unsorted and repeated steps", write_h5(
    "order.h5", {k: {"step": v["step"][perm], "loss": v["loss"][perm]} for k, v in h5runs.items()}),
    ["a", "b"], ["the steps were sorted", "repeated step"])
read_ok("hdf5 validation at its own steps", write_h5(
    "val.h5", {k: dict(v, val_step=np.arange(5, 41, 5), val_loss=v["loss"][4::5] * 1.1)
               for k, v in h5runs.items()}), ["a", "b"])
read_ok("hdf5 NaN loss is a divergence", write_h5(
    "div.h5", dict(h5runs, c={"step": np.arange(1, 33), "loss": np.r_[curve(30), np.nan, 1.0]})),
    ["a", "b", "c"], ["run 'c' diverged at step 31"])
refused("hdf5 without /runs", write_h5("noruns.h5", {}), ["noruns.h5", "no group '/runs'"])
refused("hdf5 lengths differ", write_h5("len.h5", {"a": {"step": np.arange(1, 41),
                                                         "loss": curve(39)}}),
        ["len.h5", "run 'a'", "'/runs/a/loss'", "39 entries"])
refused("hdf5 2-D loss", write_h5("shape.h5", {"a": {"step": np.arange(1, 41),
                                                     "loss": np.ones((40, 2))}}),
        ["shape.h5", "run 'a'", "must be 1-D"])
refused("hdf5 string step", write_h5("type.h5", {"a": {"step": np.array([b"1", b"2"]),
                                                       "loss": [1.0, 0.5]}}),
        ["type.h5", "run 'a'", "element type"])
full = write_h5("full.h5", h5runs)
with open(full, "rb") as fh:
    blob = fh.read()
refused("hdf5 truncated", write("trunc.h5", blob[: len(blob) // 2]), ["trunc.h5"])

# ---- kill -9 during forecast mode: no half-written output, the previous one intact
out = os.path.join(a.work, "killed")
big = write("big.csv", csv_text({f"r{i}": curve(120, seed=i) for i in range(4)}))
sets = [f"forecast.input={big}", f"output.dir={out}", "output.name=fc", "forecast.horizons=10",
        "run.print_every=1"] + SMALL[1:]
r = run(a.hpt, deck, *sets)
check(r.returncode == 0, "a complete forecast to keep", r.stderr[-2000:])
target = os.path.join(out, "fc.h5")
before = open(target, "rb").read() if os.path.exists(target) else b""
cmd = [a.hpt, "-i", deck] + sum((["--set", s] for s in sets), [])


def intact(when):
    now = open(target, "rb").read() if os.path.exists(target) else None
    check(now == before, f"kill -9 {when}: the previous complete output is intact")


# At start, and once the replay has printed its first progress line.
for when in ("at start", "during the replay"):
    p = subprocess.Popen(cmd, cwd=a.root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    while when != "at start":
        line = p.stdout.readline()
        if not line or line.startswith("step "):
            break
    p.send_signal(signal.SIGKILL)
    p.wait()
    intact(when)
# The instant after the new file is written in full and before it is renamed into place.
env = dict(os.environ, HPT_CRASH_AT="forecast_output_written:0")
r = run(a.hpt, deck, *sets, env=env)
check(r.returncode == -signal.SIGKILL, "the crash point kills the run", str(r.returncode))
intact("before the rename")
check(any(n.startswith("fc.h5.tmp") for n in os.listdir(out)), "the unrenamed file is left as a "
      "temporary, not as the output")
r = run(a.hpt, deck, *sets)
check(r.returncode == 0 and "removed" in r.stdout and not any(
    n.startswith("fc.h5.tmp") for n in os.listdir(out)), "the next run removes the temporary",
    r.stdout[-1000:])
finish()
