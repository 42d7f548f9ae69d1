#!/usr/bin/python3
"""Replays a finished sweep as if it were running: grows one CSV file per run (step,loss[,group])
from an HDF5 curve file (/runs/<id>/step, loss; attribute group), a chunk of rows of every run at a
time, as training jobs append their logs. Used by the watch-mode test and bench.

  grow_sweep.py CURVES.h5 FOLDER [--chunk 40] [--pause 0.03] [--upto STEP] [--torn]
                [--restart RUN:AT:FROM] [--vanish RUN:AT] [--job-names] [--final-step-column]
                [--diverged-nan] [--honour-stop] [--plan]

--torn writes each chunk's last row in two parts with a pause between (a reader must wait for the
newline); --restart RUN:AT:FROM makes run RUN, once it has logged step AT, log again from step FROM
(a restart from a checkpoint; the same values, as a deterministic restart gives); --vanish RUN:AT
deletes RUN's file once it has logged step AT; --job-names names files <run>-<job>.csv with job
ids 1000_0, 1000_1, ... in run order; --upto stops every run at that step; --final-step-column
adds the column final_step: each run's planned last step (its last step in CURVES);
--diverged-nan ends a run with the run attribute diverged = 1 with a row of loss nan (as its script
logs the non-finite loss); --honour-stop writes no more rows of a run once FOLDER/<run>.stop exists
(as a script that checks it does); --plan writes FOLDER/<run>.lr first: the run's learning rate
at every step (`step,lr`), as a trainer that knows its schedule does."""
import argparse
import os
import time

import h5py


def load(path, upto):
    runs = []
    with h5py.File(path, "r") as f:
        for rid, g in f["runs"].items():
            steps, loss = g["step"][...], g["loss"][...]
            keep = steps <= upto if upto else slice(None)
            group = g.attrs.get("group", "")
            runs.append((rid, str(group.decode() if isinstance(group, bytes) else group),
                         list(steps[keep]), list(loss[keep]), int(g.attrs.get("diverged", 0))))
    return runs


def write_plans(path, folder, job_names):
    """FOLDER/<file name>.lr for every run with an lr series."""
    with h5py.File(path, "r") as f:
        for i, (rid, g) in enumerate(f["runs"].items()):
            if "lr" not in g:
                continue
            name = f"{rid}-1000_{i}" if job_names else rid
            with open(os.path.join(folder, name + ".lr"), "w") as out:
                out.write("step,lr\n" + "".join(f"{int(s)},{float(lr)!r}\n" for s, lr in zip(g["step"][...], g["lr"][...])))


def row(step, loss, group, planned):
    return f"{int(step)},{float(loss)!r}" + (f",{group}" if group else "") + (f",{planned}" if planned else "") + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("curves")
    ap.add_argument("folder")
    ap.add_argument("--chunk", type=int, default=40)
    ap.add_argument("--pause", type=float, default=0.03)
    ap.add_argument("--upto", type=int, default=0)
    ap.add_argument("--torn", action="store_true")
    ap.add_argument("--restart", default="")
    ap.add_argument("--vanish", default="")
    ap.add_argument("--job-names", action="store_true")
    ap.add_argument("--final-step-column", action="store_true")
    ap.add_argument("--diverged-nan", action="store_true")
    ap.add_argument("--honour-stop", action="store_true")
    ap.add_argument("--plan", action="store_true")
    a = ap.parse_args()
    planned = {r[0]: (r[2][-1] if a.final_step_column else None) for r in load(a.curves, 0)}
    if a.plan:
        write_plans(a.curves, a.folder, a.job_names)
    runs = load(a.curves, a.upto)
    restart = a.restart.split(":") if a.restart else None
    vanish = a.vanish.split(":") if a.vanish else None
    paths, pos, restarted, gone = {}, {}, set(), set()
    for i, (rid, group, steps, loss, diverged) in enumerate(runs):
        if a.diverged_nan and diverged and not a.upto:
            steps.append(steps[-1] + 1)
            loss.append(float("nan"))
        name = f"{rid}-1000_{i}" if a.job_names else rid
        paths[rid] = os.path.join(a.folder, name + ".csv")
        with open(paths[rid], "w") as f:
            f.write("step,loss" + (",group" if group else "") + (",final_step" if planned[rid] else "") + "\n")
        pos[rid] = 0
    while any(pos[r[0]] < len(r[2]) and r[0] not in gone for r in runs):
        for rid, group, steps, loss, _ in runs:
            if rid in gone or pos[rid] >= len(steps):
                continue
            if a.honour_stop and os.path.exists(paths[rid][:-4] + ".stop"):
                gone.add(rid)
                continue
            end = min(pos[rid] + a.chunk, len(steps))
            text = "".join(row(steps[i], loss[i], group, planned[rid]) for i in range(pos[rid], end))
            with open(paths[rid], "a") as f:
                if a.torn and len(text) > 8:
                    f.write(text[:-5])
                    f.flush()
                    time.sleep(a.pause / 4)
                    f.write(text[-5:])
                else:
                    f.write(text)
            pos[rid] = end
            if restart and rid == restart[0] and rid not in restarted and steps[end - 1] >= int(restart[1]):
                restarted.add(rid)
                pos[rid] = steps.index(int(restart[2]))
            if vanish and rid == vanish[0] and steps[end - 1] >= int(vanish[1]):
                os.remove(paths[rid])
                gone.add(rid)
        time.sleep(a.pause)


if __name__ == "__main__":
    main()
