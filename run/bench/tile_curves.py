#!/usr/bin/env python3
"""Makes a large curve file for the forecast-mode speed bench from a small one: the runs of IN that
have at least STEPS entries, cut to their first STEPS entries and repeated (ids suffixed _tK) until
there are RUNS runs. The loss, lr and grad_norm datasets and the group attribute are copied; the
validation curve is dropped (the bench times the training-loss forecasters).

  run/bench/tile_curves.py IN OUT --runs 1024 --steps 2000

Used by docs/bench.md#forecast-mode-speed: forecasting 1024 runs of 2000 steps.
"""
import argparse
import os
import sys

import h5py


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--runs", type=int, default=1024)
    ap.add_argument("--steps", type=int, default=2000)
    a = ap.parse_args()
    with h5py.File(a.input, "r") as src:
        runs = [k for k in sorted(src["runs"]) if len(src["runs"][k]["step"]) >= a.steps]
        if not runs:
            sys.exit(f"tile_curves: no run of {a.input} has {a.steps} entries")
        with h5py.File(a.output + ".part", "w") as dst:
            out = dst.create_group("runs")
            for i in range(a.runs):
                name = runs[i % len(runs)]
                g = src["runs"][name]
                h = out.create_group(f"{name}_t{i // len(runs)}")
                for key in ("step", "loss", "lr", "grad_norm"):
                    if key in g:
                        h.create_dataset(key, data=g[key][: a.steps])
                if "group" in g.attrs:
                    h.attrs["group"] = g.attrs["group"]
    os.replace(a.output + ".part", a.output)


if __name__ == "__main__":
    main()
