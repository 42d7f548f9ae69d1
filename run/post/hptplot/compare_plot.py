"""Compare output (hpt_kind "compare"): the arms of the comparison (full, hybrid, budget, freeze)
as validation loss against backward passes on one figure, log y; each arm's final validation
loss and accuracy, backward passes and wall time in the legend."""
import os

import numpy as np

from .figure import new_figure
from .hpt_file import PlotInputError, require, table, text

ARMS = ("full", "hybrid", "budget", "freeze")
COLORS = {"full": "#1f77b4", "hybrid": "#d62728", "budget": "#2ca02c", "freeze": "#7f7f7f"}


def plot(f, path):
    if "arms" not in f or not len(f["arms"]):
        raise PlotInputError(f"file '{path}' (hpt compare) has no group /arms with arm subgroups; "
                             f"expected /arms/<{'|'.join(ARMS)}>")
    names = [a for a in ARMS if a in f["arms"]] + sorted(a for a in f["arms"] if a not in ARMS)
    fig = new_figure("compare")
    ax = fig.add_subplot(1, 1, 1)
    for name in names:
        arm = table(f, f"arms/{name}", path)
        require(arm, ("backward_passes", "val_loss"), f"arm /arms/{name}", path)
        x, y = arm["backward_passes"], arm["val_loss"]
        ok = np.isfinite(y) & (y > 0)
        a = f["arms"][name].attrs
        label = name
        if "final_val_loss" in a:
            label += f": final val loss {float(a['final_val_loss']):.4g}"
        if "final_val_accuracy" in a:
            acc = float(a["final_val_accuracy"])
            label += f", acc {100 * acc if acc <= 1 else acc:.1f} %"  # a fraction, as in traces
        if "backward_total" in a:
            label += f", {int(a['backward_total'])} backward"
        if "wall_seconds" in a:
            label += f", {float(a['wall_seconds']):.3g} s"
        ax.plot(x[ok], y[ok], "o-", ms=3, lw=1.4, color=COLORS.get(name), label=label)
    ax.set_yscale("log")
    ax.set_xlabel("backward passes (count)")
    ax.set_ylabel("validation loss (log scale)")
    ax.grid(True, which="both", alpha=0.25)
    problem = text(f.attrs["problem"]) if "problem" in f.attrs else None
    ax.set_title(f"comparison {os.path.basename(path)}" + (f": {problem}" if problem else "")
                 + " — validation loss against backward passes")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
