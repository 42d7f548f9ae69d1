"""Forecast output (hpt_kind "forecast", run.mode = forecast): for a few runs, the 5-95 % fans at
a few origins against the realised curve; a reliability plot (nominal quantile level against the
realised fraction of targets below it, per horizon); the 90 % interval coverage per horizon; and
the mean |error| in log loss per horizon for hpt and the three baselines."""
import csv
import os

import h5py
import numpy as np

from .figure import new_figure
from .hpt_file import deck_value, require, table

FORECASTERS = ("hpt", "last", "loglin", "power", "law", "combined")
COLORS = {"hpt": "#9467bd", "last": "#7f7f7f", "loglin": "#ff7f0e", "power": "#2ca02c",
          "law": "#8c564b", "combined": "#d62728"}
RUN_PANELS = 6  # runs drawn in the grid (evenly spread over the file's runs)
FANS_PER_RUN = 3
LEVELS = (("q05", 0.05), ("q50", 0.50), ("q95", 0.95))


def read_curves(path):
    """{run id: (steps, loss)} from a forecast input file (HDF5 /runs/<id>/{step,loss} or CSV
    run,step,loss), or {} when it cannot be read: the raw curve is a help, not a requirement."""
    curves = {}
    try:
        if h5py.is_hdf5(path):
            with h5py.File(path, "r") as f:
                for rid, g in f["runs"].items():
                    curves[str(g.attrs.get("id", rid))] = (g["step"][...], g["loss"][...])
        else:
            rows = {}
            with open(path, newline="", encoding="utf-8-sig") as fh:
                for r in csv.DictReader(fh):
                    if r.get("loss", "").strip():  # a validation-only row has no loss
                        rows.setdefault(r.get("run", ""), []).append(
                            (float(r["step"]), float(r["loss"])))
            curves = {k: tuple(np.array(c).T) for k, c in rows.items()}
    except (OSError, KeyError, ValueError):
        return {}
    return curves


def run_names(f):
    """{run index: (run id, group name)} from the /runs/<group> attributes `index` and `id` (the id
    verbatim; the group name encodes a '/' in it)."""
    names = {}
    for group, g in f.get("runs", {}).items():
        names[int(g.attrs.get("index", len(names)))] = (str(g.attrs.get("id", group)), group)
    return names


def draw_run(ax, fc, r, name, curve, stop_origin):
    rows = np.flatnonzero(fc["run"] == r)
    if curve is not None:
        s, l = curve
        ok = np.isfinite(l) & (l > 0)
        ax.plot(s[ok], l[ok], color="#1f77b4", lw=0.6, alpha=0.4, label="loss")
    known = rows[np.isfinite(fc["target"][rows])]
    x = fc["origin"][known] + fc["horizon"][known]
    order = np.argsort(x)
    ax.plot(x[order], np.exp(fc["target"][known][order]), ".", color="#d62728", ms=3,
            label="realised (10-step mean)")
    origins = np.unique(fc["origin"][rows])
    if origins.size:
        # Fans from early, middle and late origins, leaving room for the largest horizon.
        pick = origins[np.linspace(0, max(origins.size * 2 // 3, 1) - 1,
                                   min(FANS_PER_RUN, origins.size)).round().astype(int)]
        for i, o in enumerate(np.unique(pick)):
            sel = rows[fc["origin"][rows] == o]
            sel = sel[np.argsort(fc["horizon"][sel])]
            xs = o + fc["horizon"][sel]
            ax.fill_between(xs, np.exp(fc["q05"][sel]), np.exp(fc["q95"][sel]), color=COLORS["hpt"],
                            alpha=0.25, lw=0, label="hpt 5-95 %" if i == 0 else None)
            ax.plot(xs, np.exp(fc["q50"][sel]), color=COLORS["hpt"], lw=1,
                    label="hpt median" if i == 0 else None)
            ax.axvline(o, color=COLORS["hpt"], lw=0.5, ls=":")
    if stop_origin is not None and stop_origin >= 0:
        ax.axvline(stop_origin, color="#d62728", lw=1, ls="--", label="stop list: stopped")
    ax.set_yscale("log")
    ax.set_title(f"run {name}", fontsize=9)
    ax.set_xlabel("step", fontsize=8)
    ax.set_ylabel("loss (log)", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(True, which="both", alpha=0.2)


def draw_reliability(ax, fc, horizons):
    ax.plot([0, 1], [0, 1], color="black", lw=0.8, ls="--", label="ideal")
    known = np.isfinite(fc["target"])
    for h in horizons:
        sel = known & (fc["horizon"] == h)
        if not sel.any():
            continue
        nominal = [lv for _, lv in LEVELS]
        realised = [float(np.mean(fc["target"][sel] <= fc[q][sel])) for q, _ in LEVELS]
        ax.plot(nominal, realised, "o-", ms=4, label=f"h = {h} ({int(sel.sum())} targets)")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("nominal quantile level (q05, q50, q95)")
    ax.set_ylabel("realised fraction of targets below")
    ax.set_title("hpt reliability per horizon", fontsize=10)
    ax.legend(fontsize=7, loc="upper left")
    ax.grid(True, alpha=0.25)


def summary(f, name, what, fc, horizons, baselines):
    """/summary/<name>/<what> per horizon, or computed from the rows if the file lacks it."""
    if f"summary/{name}/{what}" in f:
        return f[f"summary/{name}/{what}"][...]
    known = np.isfinite(fc["target"])
    src = fc if name == "hpt" else baselines[name]
    out = []
    for h in horizons:
        sel = known & (fc["horizon"] == h)
        if what == "mean_error":
            out.append(np.mean(src["error"][sel]) if sel.any() else np.nan)
        else:
            ins = src["inside"][sel]
            ins = ins[ins >= 0]
            out.append(np.mean(ins == 1) if ins.size else np.nan)
    return np.array(out, dtype=float)


def draw_per_horizon(ax, f, fc, horizons, baselines, what):
    width = 0.8 / len(FORECASTERS)
    pos = np.arange(len(horizons))
    for i, name in enumerate(FORECASTERS):
        if name != "hpt" and name not in baselines and f"summary/{name}" not in f:
            continue
        v = summary(f, name, what, fc, horizons, baselines)
        ax.bar(pos + (i - (len(FORECASTERS) - 1) / 2) * width, v, width, color=COLORS[name],
               label=name)
    ax.set_xticks(pos)
    ax.set_xticklabels([str(h) for h in horizons])
    ax.set_xlabel("horizon (steps)")
    if what == "coverage":
        ax.axhline(0.9, color="black", lw=0.8, ls="--", label="nominal 90 %")
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("realised coverage of the 90 % interval")
        ax.set_title("coverage per horizon", fontsize=10)
    else:
        ax.set_ylabel("mean |error| (log loss)")
        ax.set_title("error per horizon (lower is better)", fontsize=10)
    ax.legend(fontsize=7)
    ax.grid(True, axis="y", alpha=0.25)


def plot(f, path, curves_path=None):
    fc = table(f, "forecasts", path)
    require(fc, ("run", "origin", "horizon", "q05", "q50", "q95", "target"), "table /forecasts",
            path)
    horizons = ([int(h) for h in f.attrs["horizons"]] if "horizons" in f.attrs
                else sorted(int(h) for h in np.unique(fc["horizon"])))
    baselines = {b: table(f, f"baselines/{b}", path) for b in FORECASTERS[1:]
                 if f"baselines/{b}" in f}
    names = run_names(f)
    runs = sorted(names) if names else sorted(int(r) for r in np.unique(fc["run"]))
    curves_path = curves_path or deck_value(f, "forecast", "input")
    curves = read_curves(curves_path) if curves_path and os.path.exists(curves_path) else {}

    fig = new_figure("forecast")
    grid = fig.add_gridspec(3, 3, height_ratios=(1, 1, 1.15))
    shown = [runs[i] for i in np.unique(np.linspace(0, len(runs) - 1, min(RUN_PANELS, len(runs)))
                                        .round().astype(int))] if runs else []
    for k, r in enumerate(shown):
        ax = fig.add_subplot(grid[k // 3, k % 3])
        name, group = names.get(r, (str(r), str(r)))
        attrs = f["runs"][group].attrs if "runs" in f and group in f["runs"] else {}
        stop = attrs.get("stop_origin")
        stopped = attrs.get("stopped", 0)
        draw_run(ax, fc, r, name, curves.get(name), int(stop) if stopped else None)
        if k == 0:
            ax.legend(fontsize=7, loc="upper right")
    draw_reliability(fig.add_subplot(grid[2, 0]), fc, horizons)
    draw_per_horizon(fig.add_subplot(grid[2, 1]), f, fc, horizons, baselines, "coverage")
    draw_per_horizon(fig.add_subplot(grid[2, 2]), f, fc, horizons, baselines, "mean_error")
    source = f"raw loss from {curves_path}" if curves else "raw loss not found (realised targets only)"
    fig.suptitle(f"forecast {os.path.basename(path)}: {len(runs)} runs, horizons "
                 f"{', '.join(map(str, horizons))}; {len(shown)} runs shown; {source}", fontsize=11)
    fig.tight_layout()
    return fig
