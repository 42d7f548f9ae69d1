"""Shared helpers of the integration tests: argument parsing, running the hpt binary, checks."""
import argparse
import os
import shutil
import subprocess
import sys

FAILURES = []


def args():
    p = argparse.ArgumentParser()
    p.add_argument("--hpt", required=True)
    p.add_argument("--root", required=True)
    p.add_argument("--work", required=True)
    a = p.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    return a


def run(hpt, deck, *sets, cwd=None, env=None, timeout=600, extra=()):
    cmd = [hpt, "-i", deck] + [x for s in sets for x in ("--set", s)] + list(extra)
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run(cmd, cwd=cwd, env=e, capture_output=True, text=True, timeout=timeout)


def check(cond, what, detail=""):
    status = "ok  " if cond else "FAIL"
    print(f"[{status}] {what}" + (f"\n       {detail}" if (detail and not cond) else ""))
    if not cond:
        FAILURES.append(what)


def finish():
    n = len(FAILURES)
    print(f"{'all checks passed' if n == 0 else str(n) + ' check(s) failed: ' + ', '.join(FAILURES)}")
    sys.exit(1 if n else 0)


def h5():
    import h5py  # Debian's python3-h5py (installed by run/setup)
    return h5py


def deck_path(root, name):
    return os.path.join(root, "inputs", name)
