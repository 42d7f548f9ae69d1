"""run/post/hpt-plot end to end: small real hpt runs (a train trace with the training forecaster,
a forecast of synthetic curves, a watch of the same curves half grown, a bench at the smallest
size), a hybrid-style trace and a compare
file made with h5py (formats the plotter must read), each plotted to a PNG of the expected pixel
size; the trace helpers (event legend, skip ratio, fan origins) checked on known data; files that
are not plottable hpt outputs refused with exit 2, a message naming the file, and no PNG."""
import os
import shutil
import struct
import subprocess
import sys

import numpy as np

from hptest import args, check, deck_path, finish, h5, run

a = args()
f5 = h5()
plot_cmd = os.path.join(a.root, "run", "post", "hpt-plot")
sys.path.insert(0, os.path.join(a.root, "run", "post"))
sys.dont_write_bytecode = True
from hptplot import hpt_file, trace_plot  # noqa: E402

# The documented pixel sizes (docs/plots.md, --help), written out here so that a change fails.
SIZES = {"trace": (1200, 700), "forecast": (1500, 1000), "bench": (1200, 600),
         "compare": (1000, 600), "watch": (1200, 700)}
small_dyn = ["dynamics.members=2", "dynamics.hidden=16", "dynamics.stochastic=4",
             "forecast.scenarios=8", "forecast.every=10"]


def png_size(path):
    """(width, height) from the PNG's IHDR chunk, or None if it is not a PNG."""
    with open(path, "rb") as fh:
        head = fh.read(24)
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", head[16:24])


def plot(path, *extra):
    return subprocess.run([sys.executable, plot_cmd, path] + list(extra), capture_output=True, text=True,
                          timeout=120)


def plotted(path, kind, *extra, out=None):
    """Plots `path` (to `out` or the default name) and checks the PNG and its pixel size."""
    png = out or os.path.splitext(path)[0] + ".png"
    r = plot(path, *(list(extra) + (["-o", out] if out else [])))
    check(r.returncode == 0, f"{kind}: hpt-plot succeeds on {os.path.basename(path)}",
          r.stdout + r.stderr)
    size = png_size(png) if os.path.exists(png) else None
    check(size == SIZES[kind], f"{kind}: PNG written with {SIZES[kind][0]}x{SIZES[kind][1]} px",
          f"{png}: {size}")
    return png


r = subprocess.run([sys.executable, plot_cmd, "--help"], capture_output=True, text=True)
check(r.returncode == 0 and all(f"({w} x {h})" in r.stdout for w, h in SIZES.values()),
      "--help lists the kinds and pixel sizes", r.stdout + r.stderr)

# --- train trace: a real run with the training forecaster (scored fans in /forecasts).
out = os.path.join(a.work, "train")
r = run(a.hpt, deck_path(a.root, "xor.ini"), f"output.dir={out}", "train.steps=300",
        "train.forecaster=true", "forecast.horizons=10,50", *small_dyn, cwd=a.root)
check(r.returncode == 0, "train run with the forecaster succeeds", r.stdout[-2000:] + r.stderr)
trace = os.path.join(out, "xor_trace.h5")
plotted(trace, "trace")
with f5.File(trace, "r") as f:
    check(f["forecasts/origin"].shape[0] > 0, "the trace has scored forecasts to fan")

# --- a hybrid-style trace: the real trace with phases, a backward column and events whose
# legend includes the hybrid loop's names, at codes the plotter must read from the legend.
hybrid = os.path.join(a.work, "hybrid_trace.h5")
shutil.copy(trace, hybrid)
with f5.File(hybrid, "r+") as f:
    n = f["steps/step"].shape[0]
    phase = np.ones(n, dtype=np.int64)
    phase[:20] = 0
    phase[100:150] = 2
    phase[150:160] = 3
    phase[200:250] = 2
    phase[250:260] = 3
    del f["steps/phase"]
    f["steps/phase"] = phase
    if "backward" in f["steps"]:
        del f["steps/backward"]
    f["steps/backward"] = (phase != 2).astype(np.int64)
    legend = ("0 start, 1 restart, 2 checkpoint, 3 signal stop, 4 non-finite stop, 5 end, "
              "9 rollback, 7 divergence warning, 8 divergence critical, 6 predict accepted, "
              "10 phase change")
    f["events"].attrs["kinds"] = legend
    for col, vals in (("step", [0, 120, 150, 210, 230, 240, 300]), ("kind", [0, 6, 10, 7, 8, 9, 5]),
                      ("value", [0.0] * 7)):
        del f["events/" + col]
        f["events/" + col] = np.array(vals, dtype=np.float64 if col == "value" else np.int64)
plotted(hybrid, "trace")
with f5.File(hybrid, "r") as f:
    names = hpt_file.parse_code_legend(hpt_file.text(f["events"].attrs["kinds"]))
    check(names.get(9) == "rollback" and names.get(8) == "divergence critical"
          and names.get(5) == "end" and len(names) == 11, "event legend parsed from the file",
          str(names))
    steps = hpt_file.table(f, "steps", hybrid)
    fcs = hpt_file.table(f, "forecasts", hybrid)
    check(abs(trace_plot.skip_ratio(steps) - 100 / n) < 1e-12, "skip ratio = 1 - mean(backward)",
          str(trace_plot.skip_ratio(steps)))
    del steps["backward"]
    check(abs(trace_plot.skip_ratio(steps) - 100 / n) < 1e-12,
          "skip ratio without backward = fraction of predict steps")
    origins = trace_plot.fan_origins(steps, fcs)
    starts = [int(steps["step"][100]), int(steps["step"][200])]
    check(len(origins) == 2 and all(0 <= s - o < 10 for o, s in zip(origins, starts)),
          "fans at the latest origin before each predict block start", f"{origins} vs {starts}")
check(hpt_file.parse_code_legend("") == {} and hpt_file.parse_code_legend("3 x y, bad, 4 z")
      == {3: "x y", 4: "z"}, "event legend parser: empty and malformed entries")

# --- forecast output: synthetic curves, small ensemble.
curves = os.path.join(a.work, "curves.h5")
p = subprocess.run([sys.executable, os.path.join(a.root, "run", "synthetic-curves"), "--runs",
                    "6", "--steps", "300", "--out", curves], capture_output=True, text=True)
check(p.returncode == 0, "synthetic curves written", p.stdout + p.stderr)
out = os.path.join(a.work, "forecast")
r = run(a.hpt, deck_path(a.root, "forecast.ini"), f"forecast.input={curves}", f"output.dir={out}",
        "output.name=fc", "forecast.horizons=10,50,100", *small_dyn, cwd=a.root)
check(r.returncode == 0, "forecast run succeeds", r.stdout[-2000:] + r.stderr)
plotted(os.path.join(out, "fc.h5"), "forecast")
# The curve file given explicitly and a custom output name.
plotted(os.path.join(out, "fc.h5"), "forecast", "--curves", curves,
        out=os.path.join(a.work, "fc-curves.png"))

# --- watch status: the watcher on the same curves, written as one CSV per run and half grown.
live = os.path.join(a.work, "live")
os.makedirs(live)
with f5.File(curves, "r") as fc:
    for rid, g in fc["runs"].items():
        with open(os.path.join(live, rid + ".csv"), "w") as fh:
            fh.write("step,loss\n" + "".join(f"{int(st)},{float(lo)!r}\n" for st, lo in
                                             zip(g["step"][:150], g["loss"][:150])))
r = run(a.hpt, deck_path(a.root, "watch.ini"), f"watch.folder={live}", "watch.final_step=300",
        "watch.max_polls=1", f"output.dir={out}", "output.name=w", cwd=a.root)
check(r.returncode == 0, "watch of a half-grown sweep succeeds", r.stdout[-2000:] + r.stderr)
plotted(os.path.join(out, "w_watch.h5"), "watch")

# --- bench output at the smallest size, with a PyTorch-style peer CSV.
out = os.path.join(a.work, "bench")
r = run(a.hpt, deck_path(a.root, "bench-cpu.ini"), f"output.dir={out}", "bench.sizes=prototype",
        "bench.training_sizes=forecast", "bench.encoder_runs=1,64", "bench.encoder_history=32", "bench.copy_mb=4",
        cwd=a.root)
check(r.returncode == 0, "bench run at the smallest size succeeds", r.stdout[-2000:] + r.stderr)
bench = os.path.join(out, "bench-cpu.h5")
plotted(bench, "bench")
# %GEMM: each kernel row's GFLOP/s over the GEMM rate measured in the same run (the CSV holds 6
# significant digits), whose reference the console and the file name alike.
with open(os.path.join(out, "bench-cpu.csv")) as fh:
    head, *rows = [line.rstrip("\n").split(",") for line in fh]
col = {name: i for i, name in enumerate(head)}
kernels = [x for x in rows if not x[0].startswith("encode") and x[0] != "train_step"]  # no GEMM shape
check(kernels and all(float(x[col["gemm_gflops"]]) > 0 and abs(float(x[col["gemm_fraction"]]) *
                      float(x[col["gemm_gflops"]]) - float(x[col["gflops"]])) <= 1e-4 * float(x[col["gflops"]])
                      for x in kernels),
      "bench: %GEMM is the kernel's GFLOP/s over the GEMM rate of the same run",
      str([(x[0], x[col["gflops"]], x[col["gemm_gflops"]], x[col["gemm_fraction"]]) for x in kernels]))
with f5.File(bench, "r") as f:
    reference = f.attrs["gemm_reference"]
    reference = reference.decode() if isinstance(reference, bytes) else str(reference)
check(reference and f"measured now with {reference};" in r.stdout,
      "bench: the console names the GEMM reference stored in the file", reference)
peers = os.path.join(a.work, "torch.csv")
with open(peers, "w") as fh:
    fh.write("size,variant,E,N,H,I,Y,us_per_step,min_us_per_step,member_steps_per_s,gflops\n"
             "prototype,GRUCell eager (cpu; 2 thr),3,1,256,64,20,150.0,140.0,2e4,1.0\n")
plotted(bench, "bench", "--peers", peers, out=os.path.join(a.work, "bench-peers.png"))

# --- compare output (format of the comparison mode, made here with h5py).
compare = os.path.join(a.work, "compare.h5")
with f5.File(compare, "w") as f:
    f.attrs["hpt_kind"] = "compare"
    f.attrs["hpt_format_version"] = 1
    f.attrs["problem"] = "digits"
    for i, arm in enumerate(("full", "hybrid", "budget", "freeze")):
        g = f.create_group("arms/" + arm)
        k = np.arange(1, 11, dtype=np.int64)
        g["step"] = k * 50
        g["backward_passes"] = k * (50 - 10 * (arm == "hybrid"))
        g["val_loss"] = 2.0 * np.exp(-0.2 * k * (1 + 0.1 * i))
        g["val_accuracy"] = 1 - np.exp(-0.3 * k)
        g.attrs["final_val_loss"] = float(g["val_loss"][-1])
        g.attrs["final_val_accuracy"] = float(g["val_accuracy"][-1])
        g.attrs["backward_total"] = int(g["backward_passes"][-1])
        g.attrs["wall_seconds"] = 1.5 + i
plotted(compare, "compare")

# --- files that are not plottable hpt outputs: exit 2, the file named, nothing written.
bad = os.path.join(a.work, "bad")
os.makedirs(bad)
text_file = os.path.join(bad, "notes.h5")
with open(text_file, "w") as fh:
    fh.write("not an HDF5 file\n")
plain = os.path.join(bad, "plain.h5")
with f5.File(plain, "w") as f:
    f["x"] = np.arange(3)
ckpt = [x for x in os.listdir(os.path.join(a.work, "train")) if "_ckpt_" in x]
check(len(ckpt) == 1, "the train run left a checkpoint", str(ckpt))
ckpt = os.path.join(a.work, "train", ckpt[0])
cases = ((text_file, "not an HDF5 file"), (plain, "no hpt_kind"),
         (ckpt, "hpt checkpoint file"), (os.path.join(bad, "none.h5"), "does not exist"))
for path, why in cases:
    png = os.path.splitext(path)[0] + ".png"
    r = plot(path)
    check(r.returncode == 2, f"{os.path.basename(path)}: exit 2", r.stdout + r.stderr)
    check(path in r.stderr and why in r.stderr and "expected" in r.stderr,
          f"{os.path.basename(path)}: message names the file and what was expected", r.stderr)
    check(not os.path.exists(png), f"{os.path.basename(path)}: no PNG written")
r = plot(compare, "-o", os.path.join(bad, "missing", "c.png"))
check(r.returncode == 2 and "does not exist" in r.stderr, "missing output folder: exit 2",
      r.stderr)
check(not [x for x in os.listdir(bad) if x.endswith(".png") or ".tmp" in x],
      "no PNG or temporary left in the refused files' folder", str(os.listdir(bad)))
finish()
