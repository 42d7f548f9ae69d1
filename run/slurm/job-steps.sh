# Steps shared by hpt's Slurm batch scripts (sourced, with $root set to the repository): the
# binary, the OpenMP variables, and running hpt so that Slurm's signals reach it.
# shellcheck shell=bash

# The binary a job runs, exported for run/hpt: HPT_BIN if set, else $root/$1/hpt. Jobs never build:
# compute nodes may lack the compiler or the network, and array tasks would run ninja at once.
use_built_binary() {  # $1: build folder (build, build-cuda or build-mpi)
  export HPT_BIN=${HPT_BIN:-$root/$1/hpt}
  if [ ! -x "$HPT_BIN" ]; then
    echo "hpt job: no binary $HPT_BIN; build it on a login node first (run/build, run/build --cuda or run/build --mpi)" >&2
    exit 2
  fi
}

# One OpenMP thread per CPU Slurm gave the task, spread over them, one per hardware thread.
set_openmp_binding() {
  export OMP_NUM_THREADS=${SLURM_CPUS_PER_TASK:-$(nproc)}
  export OMP_PROC_BIND=spread
  export OMP_PLACES=threads
}

hpt_child=""
hpt_launcher=()  # what starts hpt's processes: nothing (one process), or srun (mpi.sbatch)
hpt_stop_signal=""
hpt_traps_run=0
forward_signal() {  # $1: signal name
  hpt_traps_run=$((hpt_traps_run + 1))
  if [ -n "$hpt_child" ] && kill -s "$1" "$hpt_child" 2>/dev/null; then
    hpt_stop_signal=$1
  fi
}

# Runs run/hpt "$@" (through "${hpt_launcher[@]}" when set) and returns its exit status, forwarding
# SIGUSR1 and SIGTERM to it (srun passes them on to every task): hpt then
# writes a checkpoint at the next step boundary and exits 0. With --signal=B:USR1@T only this shell
# gets the signal, and bash runs a trap only once its foreground command ends, so hpt runs in the
# background and the shell waits for it (a trap interrupts `wait`, which is then called again).
run_hpt_forwarding_signals() {
  local rc seen
  hpt_stop_signal=""
  trap 'forward_signal USR1' USR1
  trap 'forward_signal TERM' TERM
  "${hpt_launcher[@]}" "$root/run/hpt" "$@" &
  hpt_child=$!
  while :; do
    seen=$hpt_traps_run
    rc=0
    wait "$hpt_child" || rc=$?
    # A status above 128 with a trap run meanwhile: the wait was interrupted, hpt still runs.
    if [ "$rc" -le 128 ] || [ "$hpt_traps_run" = "$seen" ]; then break; fi
  done
  trap - USR1 TERM
  hpt_child=""
  return "$rc"
}

# After hpt stopped cleanly on Slurm's warning before the time limit (SIGUSR1), puts the job back
# in the queue; the requeued job continues from the newest checkpoint (run.restart=auto). SIGTERM
# (scancel, or a preemption, which Slurm requeues by itself under --requeue) does not requeue.
requeue_if_warned() {  # $1: hpt's exit status
  if [ "$1" != 0 ] || [ "$hpt_stop_signal" != USR1 ]; then return 0; fi
  if [ -n "${SLURM_JOB_ID:-}" ]; then
    echo "hpt job: stopped by SIGUSR1 before the time limit; requeueing job $SLURM_JOB_ID"
    scontrol requeue "$SLURM_JOB_ID"
  else
    echo "hpt job: stopped by SIGUSR1; not a Slurm job, nothing to requeue"
  fi
}
