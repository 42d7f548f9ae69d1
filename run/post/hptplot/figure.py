"""Figures of a fixed pixel size per plot kind, saved atomically (a failed plot leaves no PNG)."""
import os

import matplotlib

matplotlib.use("Agg")  # headless: no display on compute nodes
import matplotlib.pyplot as plt  # noqa: E402

DPI = 100
# Pixel size (width, height) of each kind's PNG; fixed so that the file's size is deterministic.
SIZES = {
    "trace": (1200, 700),
    "forecast": (1500, 1000),
    "bench": (1200, 600),
    "compare": (1000, 600),
    "watch": (1200, 700),
}


def new_figure(kind):
    w, h = SIZES[kind]
    return plt.figure(figsize=(w / DPI, h / DPI), dpi=DPI)


def save(fig, out):
    """Writes `fig` to `out` as PNG through a temporary file renamed into place."""
    tmp = f"{out}.tmp.{os.getpid()}"
    try:
        # No bbox_inches="tight": it would change the pixel size from figure to figure.
        fig.savefig(tmp, format="png", dpi=DPI)
        os.replace(tmp, out)
    finally:
        plt.close(fig)
        if os.path.exists(tmp):
            os.remove(tmp)
