"""Logs a training run's loss curve where hpt's live sweep watcher (run.mode = watch) reads it, and
tells the run when hpt has stopped it. Needs only the Python standard library.

    import sys; sys.path.insert(0, "/path/to/hpt/run")  # live-sweep-array.sbatch sets PYTHONPATH
    from log_curve import CurveLog

    curve = CurveLog("out/live-sweep/live", "lr_0.01", final_step=steps,  # appends to .../lr_0.01.csv
                     lr_plan=lambda step: schedule(step))           # writes .../lr_0.01.lr once
    for step in range(1, steps + 1):
        loss = train_step()
        curve.log(step, loss, lr=lr, val_loss=val if step % 100 == 0 else None)
        if curve.should_stop():                          # hpt wrote out/live-sweep/live/lr_0.01.stop
            break

The file is `<folder>/<run>.csv` with the header `step,loss,lr,val_loss` (and `,job` when the run
has a Slurm job id, which hpt needs for watch.act = scancel, and `,final_step` when the run says
its planned last step, which replaces watch.final_step for its group); an empty cell is a value
not given. With `lr_plan` it first writes `<folder>/<run>.lr`: the planned learning rate of every
step, which hpt's forecast of the run's final loss uses (a decay still to come changes it).
Every row is one unbuffered write, so a reader sees whole rows, but for a last row being written.
A run that starts again appends to its file; a row cut short by a crash is dropped first.
"""
import os


def slurm_job_id():
    """The Slurm id of this job: ARRAYJOB_TASK for an array task, else the job id, else None."""
    env = os.environ
    if env.get("SLURM_ARRAY_JOB_ID") and env.get("SLURM_ARRAY_TASK_ID"):
        return f"{env['SLURM_ARRAY_JOB_ID']}_{env['SLURM_ARRAY_TASK_ID']}"
    return env.get("SLURM_JOB_ID") or None


def write_plan(path, lr_plan, final_step):
    """Writes <run>.lr, the planned learning rate of every step, in one rename: `lr_plan` is a list
    of (step, lr) pairs or a function of the step (then for steps 1 to final_step)."""
    if callable(lr_plan):
        if not final_step:
            raise ValueError("CurveLog: an lr_plan function needs final_step (the planned last step)")
        lr_plan = [(s, lr_plan(s)) for s in range(1, int(final_step) + 1)]
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w") as f:
        f.write("step,lr\n" + "".join(f"{int(s)},{float(lr)!r}\n" for s, lr in lr_plan))
    os.replace(tmp, path)


def cell(value):
    return "" if value is None else repr(float(value))


class CurveLog:
    """Appends the rows of one run to `<folder>/<run>.csv`; `job` defaults to slurm_job_id()."""

    def __init__(self, folder, run, job=None, final_step=None, lr_plan=None):
        if not run or "/" in run or run.startswith("."):
            raise ValueError(f"CurveLog: run name '{run}' must be a file name (no '/', not starting with '.')")
        self.job = str(job) if job is not None else slurm_job_id()
        self.final_step = None if final_step is None else int(final_step)
        if self.job is not None and ("," in self.job or "\n" in self.job):
            raise ValueError(f"CurveLog: job id '{self.job}' must not contain a comma or a line break")
        os.makedirs(folder, exist_ok=True)
        if lr_plan is not None:
            write_plan(os.path.join(folder, run + ".lr"), lr_plan, self.final_step)
        self.path = os.path.join(folder, run + ".csv")
        self.stop_path = os.path.join(folder, run + ".stop")
        self.fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        header = self._existing_header()
        if header is None:
            header = ("step,loss,lr,val_loss" + (",job" if self.job else "")
                      + (",final_step" if self.final_step else ""))
            os.write(self.fd, (header + "\n").encode())
        columns = header.split(",")  # a restarted run keeps the columns of its file
        self.with_job, self.with_final = "job" in columns, "final_step" in columns

    def _existing_header(self):
        """The header of a file already written (cutting a torn last row), or None for a new file."""
        with open(self.path, "rb") as f:
            data = f.read()
        os.ftruncate(self.fd, data.rfind(b"\n") + 1)
        return data.split(b"\n", 1)[0].decode().strip() if b"\n" in data else None

    def log(self, step, loss, lr=None, val_loss=None):
        """Appends the row of `step`; None leaves its cell empty."""
        row = f"{int(step)},{cell(loss)},{cell(lr)},{cell(val_loss)}"
        if self.with_job:
            row += "," + (self.job or "")
        if self.with_final:
            row += "," + (str(self.final_step) if self.final_step else "")
        os.write(self.fd, (row + "\n").encode())

    def should_stop(self):
        """True once hpt has written `<folder>/<run>.stop` (watch.act = file)."""
        return os.path.exists(self.stop_path)

    def close(self):
        os.close(self.fd)
