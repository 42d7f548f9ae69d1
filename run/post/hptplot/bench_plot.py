"""Bench output (hpt_kind "bench", run.mode = bench): time per kernel and size, hpt against its
peers where given (--peers: the CSV of run/bench/torch_rollout.py --csv, or another hpt bench
output, e.g. the other backend). Left: microseconds per rollout step (and per single GRU step)
per size; right: microseconds per encoded run per batch size R, per encoder style."""
import csv
import io
import os

import h5py
import numpy as np

from .figure import new_figure
from .hpt_file import PlotInputError, text


def hpt_rows(f, path):
    """[(kernel, size, us_per_step)] of an hpt bench output."""
    if "table_csv" not in f.attrs:
        raise PlotInputError(f"file '{path}' (hpt bench) has no table_csv attribute; expected one "
                             "written by hpt's bench mode")
    rows = list(csv.DictReader(io.StringIO(text(f.attrs["table_csv"]))))
    us = f["us_per_step"][...] if "us_per_step" in f else None
    if us is not None and len(us) != len(rows):
        raise PlotInputError(f"file '{path}': /us_per_step has {len(us)} rows, table_csv "
                             f"{len(rows)}; expected one per table row")
    return [(r["kernel"], r["size"], float(us[i]) if us is not None else float(r["us/step"]))
            for i, r in enumerate(rows)]


def peer_rows(path):
    """(label prefix, [(variant, size, us_per_step)]) of a peer file; PlotInputError if unreadable."""
    if h5py.is_hdf5(path):
        with h5py.File(path, "r") as g:
            if text(g.attrs.get("hpt_kind", "")) != "bench":
                raise PlotInputError(f"peer file '{path}' is not an hpt bench output")
            backend = text(g.attrs.get("hpt_backend", "other backend"))
            return [(f"hpt {backend} {k.split('/')[0]}", s, u) for k, s, u in hpt_rows(g, path)]
    try:
        with open(path, newline="") as fh:
            rows = list(csv.DictReader(fh))
        if rows and "variant" in rows[0]:  # run/bench/torch_rollout.py --csv
            return [("PyTorch " + r["variant"], r["size"], float(r["us_per_step"])) for r in rows]
        if rows and "kernel" in rows[0]:  # an hpt bench CSV
            return [(f"hpt {r.get('backend', 'other')} {r['kernel'].split('/')[0]}", r["size"],
                     float(r["us_per_step"])) for r in rows]
    except (OSError, KeyError, ValueError, UnicodeDecodeError) as e:
        raise PlotInputError(f"peer file '{path}' cannot be read ({e}); expected the CSV of "
                             "run/bench/torch_rollout.py --csv or an hpt bench output")
    raise PlotInputError(f"peer file '{path}' has neither a 'variant' nor a 'kernel' column; "
                         "expected the CSV of run/bench/torch_rollout.py --csv or an hpt bench "
                         "output")


def grouped_bars(ax, groups, series):
    """Bars of `series` {label: {group: value}} grouped by `groups` along x."""
    width = 0.8 / max(len(series), 1)
    pos = np.arange(len(groups))
    for i, (label, values) in enumerate(series.items()):
        v = [values.get(g, np.nan) for g in groups]
        ax.bar(pos + (i - (len(series) - 1) / 2) * width, v, width, label=label)
    ax.set_xticks(pos)
    ax.set_xticklabels(groups)
    ax.set_yscale("log")
    finite = [x for v in series.values() for x in v.values() if np.isfinite(x) and x > 0]
    if finite:  # bars on a log axis start at its bottom: keep it well below the smallest bar
        ax.set_ylim(bottom=min(finite) / 3)
    ax.grid(True, axis="y", which="both", alpha=0.25)


def plot(f, path, peers=()):
    rows = hpt_rows(f, path)
    rollout = {}
    encode = {}
    sizes = []
    for kernel, size, us in rows:
        if kernel.startswith("encode_"):
            encode.setdefault(kernel[len("encode_"):], {})[size] = us
            continue
        if kernel == "train_step":  # µs per training step of its own sizes: not on this figure
            continue
        if size not in sizes:
            sizes.append(size)
        label = f"hpt {kernel}" if kernel.startswith("rollout") else "hpt one GRU step"
        rollout.setdefault("hpt rollout" if kernel.startswith("rollout") else label, {})[size] = us
    variant = {s: k.split("/", 1)[1] for k, s, _ in rows if k.startswith("rollout/")}
    for p in peers:
        for label, size, us in peer_rows(p):
            if size in sizes and "encode_" not in label:  # peers are compared on rollout sizes
                rollout.setdefault(label, {})[size] = us

    fig = new_figure("bench")
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": (1.6, 1)})
    if sizes:
        grouped_bars(left, [f"{s}\n({variant[s]})" if s in variant else s for s in sizes],
                     {k: {f"{s}\n({variant[s]})" if s in variant else s: u for s, u in v.items()}
                      for k, v in rollout.items()})
        left.legend(fontsize=7)
    left.set_xlabel("rollout size (hpt kernel variant)")
    left.set_ylabel("time per step (µs, log scale)")
    left.set_title("rollout: µs per rollout step, GRU: µs per single step", fontsize=10)
    if encode:
        groups = sorted({s for v in encode.values() for s in v},
                        key=lambda s: int(s.split("=")[1]) if s.startswith("R=") else 0)
        grouped_bars(right, groups, {f"encoder {k}": v for k, v in encode.items()})
        right.legend(fontsize=7)
    right.set_xlabel("encoded runs R")
    right.set_ylabel("time per encoded run (µs, log scale)")
    right.set_title("encoders", fontsize=10)
    peers_note = f", peers: {', '.join(os.path.basename(p) for p in peers)}" if peers else \
        ", no peers given (--peers)"
    fig.suptitle(f"bench {os.path.basename(path)}: {text(f.attrs.get('hpt_backend', '?'))}, "
                 f"precision {text(f.attrs.get('hpt_precision', '?'))}{peers_note}", fontsize=11)
    fig.tight_layout()
    return fig
