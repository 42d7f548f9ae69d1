"""Live sweep status (hpt_kind "watch", run.mode = watch): every run's loss curve so far (log y)
with its forecast fan from the newest step to the final step (5-95 % shaded, median line), one
panel per group of runs, runs coloured by the watcher's decision and stopped runs marked at the
step they were stopped. The poll number and the count of stopped runs are in the title."""
import os

import h5py
import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from .figure import new_figure
from .hpt_file import PlotInputError, text

MAX_GROUPS = 6
LABELLED_RUNS = 12  # panels with more runs name none of them at their curve's end
# Decision -> (colour, line style); a decision not listed is drawn like wait.
STYLE = {"stop": ("#d62728", "-"), "continue": ("#1f77b4", "-"), "wait": ("#7f7f7f", "-"),
         "finished": ("#000000", "-"), "gone": ("#bbbbbb", "--")}
ROOT_ATTRS = ("poll", "runs", "stopped", "final_step")


def table(f, name, path):
    """A group of 1-D columns as {column: array}; {} when the group is absent."""
    if name not in f:
        return {}
    if not isinstance(f[name], h5py.Group):
        raise PlotInputError(f"file '{path}' (hpt watch): /{name} is not a group; expected one written by hpt")
    return {k: v[...] for k, v in f[name].items()}


def part(columns, names, i, dtype):
    """Run i's slice of the flattened columns `names` (entries offset[i] to offset[i + 1])."""
    offset = columns.get("offset")
    if offset is None or i + 1 >= len(offset):
        return [np.zeros(0, dtype) for _ in names]
    return [np.asarray(columns[n][offset[i]:offset[i + 1]], dtype=dtype if n == "step" else float)
            for n in names]


def read_runs(f, path):
    """The runs of the status file in table order: names and decision (/runs/<i>), the step they
    were stopped at (/status), their thinned curves (/curves) and forecast fans (/fans)."""
    if "runs" not in f:
        return []
    if not isinstance(f["runs"], h5py.Group):
        raise PlotInputError(f"file '{path}' (hpt watch): /runs is not a group; expected one written by hpt")
    status, curves, fans = table(f, "status", path), table(f, "curves", path), table(f, "fans", path)
    stop_step = status.get("stop_step", np.zeros(0, np.int64))
    runs = []
    for key in sorted((k for k in f["runs"] if k.isdigit()), key=int):
        g, i = f["runs"][key], int(key)
        step, loss = part(curves, ("step", "loss"), i, np.int64)
        fan_step, q05, q50, q95 = part(fans, ("step", "q05", "q50", "q95"), i, np.int64)
        runs.append({"id": text(g.attrs.get("id", key)), "group": text(g.attrs.get("group", "")),
                     "decision": text(g.attrs.get("decision", "wait")),
                     "stop_step": int(stop_step[i]) if i < len(stop_step) else -1,
                     "step": step, "loss": loss, "fan_step": fan_step,
                     "fan_q05": q05, "fan_q50": q50, "fan_q95": q95})
    return runs


def draw_run(ax, r, labelled):
    color, style = STYLE.get(r["decision"], STYLE["wait"])
    ok = np.isfinite(r["loss"]) & (r["loss"] > 0)
    step, loss = r["step"][ok], r["loss"][ok]
    ax.plot(step, loss, color=color, ls=style, lw=0.9, alpha=0.85)
    fan = np.isfinite(r["fan_q05"]) & np.isfinite(r["fan_q50"]) & np.isfinite(r["fan_q95"])
    if fan.any() and len(r["fan_step"]) == len(fan):
        x = r["fan_step"][fan]
        ax.fill_between(x, np.exp(r["fan_q05"][fan]), np.exp(r["fan_q95"][fan]), color=color,
                        alpha=0.15, lw=0)
        ax.plot(x, np.exp(r["fan_q50"][fan]), color=color, ls=":", lw=1.2)
    if r["decision"] == "stop" and r["stop_step"] >= 0 and step.size:
        at = min(np.searchsorted(step, r["stop_step"], side="right") - 1, step.size - 1)
        ax.plot(r["stop_step"], loss[max(at, 0)], "X", color=STYLE["stop"][0], ms=8, mec="white", zorder=5)
    if labelled and step.size:
        ax.annotate(f" {r['id']}", (step[-1], loss[-1]), fontsize=7, color=color, va="center")


def draw_group(ax, name, runs, final_step):
    for r in runs:
        draw_run(ax, r, len(runs) <= LABELLED_RUNS)
    if final_step > 0:
        ax.axvline(final_step, color="black", lw=0.8, ls="--")
    counts = {d: sum(r["decision"] == d for r in runs) for d in STYLE}
    summary = ", ".join(f"{n} {d}" for d, n in counts.items() if n)
    ax.set_title(f"{'group ' + name if name else 'all runs'}: {len(runs)} runs ({summary})", fontsize=9)
    ax.set_yscale("log")
    ax.set_xlabel("step", fontsize=8)
    ax.set_ylabel("loss (log)", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(True, which="both", alpha=0.2)


def legend_handles():
    """Proxy artists for the decisions, the fan, the stop marker and the final step."""
    h = [Line2D([], [], color=c, ls=s, lw=1.5, label=d) for d, (c, s) in STYLE.items()]
    h.append(Patch(color="#7f7f7f", alpha=0.25, lw=0, label="forecast 5-95 %"))
    h.append(Line2D([], [], color="#7f7f7f", ls=":", lw=1.2, label="forecast median"))
    h.append(Line2D([], [], marker="X", color=STYLE["stop"][0], ms=8, ls="", label="stopped at"))
    h.append(Line2D([], [], color="black", lw=0.8, ls="--", label="final step"))
    return h


def plot(f, path):
    missing = [a for a in ROOT_ATTRS if a not in f.attrs]
    if missing:
        raise PlotInputError(f"file '{path}' (hpt watch) has no root attribute {', '.join(missing)}; "
                             "expected one written by hpt")
    poll, n, stopped, final_step = (int(f.attrs[a]) for a in ROOT_ATTRS)
    runs = read_runs(f, path)
    groups = list(dict.fromkeys(r["group"] for r in runs))  # in the order of the status table

    fig = new_figure("watch")
    shown = groups[:MAX_GROUPS]
    cols = 1 if len(shown) <= 1 else 2 if len(shown) <= 4 else 3
    rows = max(1, -(-len(shown) // cols))
    axes = [fig.add_subplot(rows, cols, i + 1) for i in range(max(1, len(shown)))]
    for ax, name in zip(axes, shown):
        draw_group(ax, name, [r for r in runs if r["group"] == name], final_step)
    if not shown:
        axes[0].text(0.5, 0.5, "no runs yet", transform=axes[0].transAxes, ha="center", va="center")
        axes[0].set_axis_off()
    fig.legend(handles=legend_handles(), loc="lower center", ncol=9, fontsize=8, frameon=False)
    title = f"watch {os.path.basename(path)}: poll {poll}, {stopped} of {n} runs stopped"
    if len(groups) > MAX_GROUPS:
        title += f"; {len(groups)} groups, the first {MAX_GROUPS} shown"
    folder = text(f.attrs["folder"]) if "folder" in f.attrs else ""
    fig.suptitle(title + (f"\n{folder}, final step {final_step}" if folder else f", final step {final_step}"),
                 fontsize=11)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return fig
