"""Opening an hpt output for plotting: what kind it is, its tables and attributes, and the one
error (PlotInputError) for every way a file is not something the plotter can read."""
import os

import h5py
import numpy as np

# hpt_kind -> what the plotter draws for it; every other kind is refused.
PLOTTABLE = ("trace", "forecast", "bench", "compare", "watch")
EXPECTED = ("an hpt output: an HDF5 file whose root attribute hpt_kind is one of "
            + ", ".join(PLOTTABLE))


class PlotInputError(Exception):
    """A file the plotter cannot plot; the message names the file and what was expected."""


def text(value):
    """An HDF5 string attribute as str (h5py gives str or bytes depending on how it was written)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, np.ndarray) and value.shape == ():
        return text(value[()])
    return str(value)


def open_output(path):
    """Opens `path` read-only and returns (h5py.File, kind); PlotInputError if it is not a
    plottable hpt output."""
    if not os.path.exists(path):
        raise PlotInputError(f"file '{path}' does not exist; expected {EXPECTED}")
    if os.path.isdir(path):
        raise PlotInputError(f"'{path}' is a folder; expected {EXPECTED}")
    if not h5py.is_hdf5(path):
        raise PlotInputError(f"file '{path}' is not an HDF5 file; expected {EXPECTED}")
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise PlotInputError(f"file '{path}' cannot be read as HDF5 ({e}); expected {EXPECTED}")
    if "hpt_kind" not in f.attrs:
        f.close()
        raise PlotInputError(f"file '{path}' is an HDF5 file but not an hpt output (no hpt_kind "
                             f"attribute on its root group); expected {EXPECTED}")
    kind = text(f.attrs["hpt_kind"])
    if kind not in PLOTTABLE:
        f.close()
        raise PlotInputError(f"file '{path}' is an hpt {kind} file, which hpt-plot does not plot; "
                             f"expected hpt_kind one of {', '.join(PLOTTABLE)}")
    return f, kind


def table(f, name, path):
    """The table `name` (a group with one 1-D dataset per column) as {column: numpy array}."""
    if name not in f or not isinstance(f[name], h5py.Group):
        raise PlotInputError(f"file '{path}' (hpt {text(f.attrs['hpt_kind'])}) has no table "
                             f"/{name}; expected one written by hpt")
    return {k: f[name][k][...] for k in f[name] if isinstance(f[name][k], h5py.Dataset)}


def require(columns, names, where, path):
    """PlotInputError naming the first of `names` missing from `columns`."""
    for n in names:
        if n not in columns:
            raise PlotInputError(f"file '{path}': {where} has no column '{n}'; expected the "
                                 f"columns {', '.join(names)}")


def trace_table(path, name, columns):
    """The table `name` of the training trace at `path`, with at least `columns`; PlotInputError if
    the file is not a trace or lacks them."""
    f, kind = open_output(path)
    with f:
        if kind != "trace":
            raise PlotInputError(f"file '{path}' is an hpt {kind} file; expected a training trace "
                                 "(hpt_kind trace)")
        t = table(f, name, path)
    require(t, columns, f"/{name}", path)
    return t


def parse_code_legend(legend):
    """'0 start, 1 restart, 5 end' -> {0: 'start', 1: 'restart', 5: 'end'}. Entries that do not
    start with an integer are ignored."""
    codes = {}
    for entry in legend.split(","):
        head, _, name = entry.strip().partition(" ")
        try:
            codes[int(head)] = name.strip() or f"event {head}"
        except ValueError:
            continue
    return codes


def deck_value(f, section, key):
    """`key` of `[section]` in the resolved deck stored in hpt_deck, or None."""
    if "hpt_deck" not in f.attrs:
        return None
    current = None
    for line in text(f.attrs["hpt_deck"]).splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1].strip()
        elif current == section and "=" in line:
            k, _, v = line.partition("=")
            if k.strip() == key:
                return v.strip()
    return None
