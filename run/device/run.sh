#!/usr/bin/env bash
# Runs on the GPU host from inside a bundle made by run/device/bundle: the whole test suite (unit +
# integration) on the CUDA backend, the benchmarks, the PyTorch peer in the same job, and the GPU training
# runs. Results go under $OUT (or ./results). Usage: ./run.sh [all|tests|unit|bench|train|profile|compare]
# (`profile`, not part of `all`: Nsight Compute sections of the rollout kernels, where ncu exists;
# `unit`: the unit tests only; `compare`: hpt --compare of the GPU reference decks HPT_DECKS, default
# teacher-large-sgd and teacher-large-adam, over the seeds HPT_SEEDS, default 1,2,3).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here/results}
mkdir -p "$out"
export LD_LIBRARY_PATH="$here/lib:${LD_LIBRARY_PATH:-}"
export HPT_DEPS_DIR="$here/deps"; mkdir -p "$HPT_DEPS_DIR/data"
cp "$here/data/digits.csv.gz" "$HPT_DEPS_DIR/data/" 2>/dev/null || true
export OMP_PROC_BIND=false
export HPT_MODELS_DIR="$here/inputs/models"  # the shipped level model (forecast.pretrained = default)
export HPT_TEST_DATA_DIR="$here/tests/data"  # the unit tests' reference data, carried by the bundle
what=${1:-all}
status=0
summary() { printf '%s\n' "$*" | tee -a "$out/summary.txt"; }
{
  echo "== host"; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv
  "$here/bin/hpt" --version
} 2>&1 | tee "$out/device.txt"

if [ "$what" = all ] || [ "$what" = tests ] || [ "$what" = unit ]; then
  "$here/bin/hpt_unit_tests" --gtest_brief=1 > "$out/unit.log" 2>&1
  rc=$?; summary "unit tests (CUDA + host backends): rc=$rc $(grep -E '^\[  (PASSED|FAILED) ' "$out/unit.log" | tr '\n' ' ')"
  [ $rc = 0 ] || status=1
fi
if [ "$what" = all ] || [ "$what" = tests ]; then
  for t in "$here"/tests/integration/test_*.py; do
    n=$(basename "$t" .py)
    case $n in
      # They check the repository's own files (docs, references, login-node scripts with shellcheck),
      # which the bundle does not carry, not the backend: CI runs them.
      test_doc_references|test_docs_options|test_slurm_scripts)
        summary "integration $n: not run here (checks the repository's files; CI runs it)"; continue ;;
    esac
    OMP_NUM_THREADS=2 python3 "$t" --hpt "$here/bin/hpt" --root "$here" --work "/tmp/hpt-it/$n" > "$out/it_$n.log" 2>&1
    rc=$?; summary "integration $n: rc=$rc $(tail -n1 "$out/it_$n.log")"
    [ $rc = 0 ] || status=1
  done
  # The CUDA binary against the CPU build's OpenMP binary on the same deck and seed.
  python3 "$here/tests/integration/compare_backends.py" --hpt "$here/bin/hpt" --other "$here/bin/hpt-omp" \
    --root "$here" --work /tmp/hpt-it/compare_backends > "$out/it_compare_backends.log" 2>&1
  rc=$?; summary "CUDA vs OpenMP, same deck and seed: rc=$rc $(tail -n1 "$out/it_compare_backends.log")"
  [ $rc = 0 ] || status=1
fi
if [ "$what" = all ] || [ "$what" = bench ]; then
  (cd "$here" && "$here/bin/hpt" -i inputs/bench-gpu.ini --set output.dir="$out" > "$out/bench-gpu.log" 2>&1)
  summary "bench-gpu: rc=$?"
  python3 "$here/bench/torch_rollout.py" --threads 16 --repeat 5 --hpt-csv "$out/bench-gpu.csv" --csv "$out/torch.csv" \
    > "$out/torch.log" 2>&1
  summary "torch peer: rc=$?"
  python3 "$here/bench/torch_training.py" --peak-gflops 67000 --hpt-csv "$out/bench-gpu.csv" \
    --csv "$out/torch-training.csv" > "$out/torch-training.log" 2>&1
  summary "torch training-step peer: rc=$?"
  (cd "$here" && OMP_NUM_THREADS=16 "$here/bin/hpt-omp" -i inputs/bench-cpu.ini --set output.dir="$out" \
    --set output.name=bench-omp16 > "$out/bench-omp16.log" 2>&1)
  summary "bench-cpu on 16 OpenMP threads: rc=$?"
fi
if [ "$what" = all ] || [ "$what" = train ]; then
  for d in digits-baseline teacher-large; do
    (cd "$here" && "$here/bin/hpt" -i inputs/$d.ini --set output.dir="$out/train" > "$out/train_$d.log" 2>&1)
    summary "train $d (CUDA): rc=$? $(grep -E 'steps/s|final validation accuracy' "$out/train_$d.log" | tr -s ' ' | tr '\n' ' ')"
    (cd "$here" && OMP_NUM_THREADS=16 "$here/bin/hpt-omp" -i inputs/$d.ini --set output.dir="$out/train-omp" \
      --set train.steps=200 > "$out/train_omp16_$d.log" 2>&1)
    summary "train $d (OpenMP 16 threads, 200 steps): rc=$? $(grep -E 'steps/s' "$out/train_omp16_$d.log" | tr -s ' ' | tr '\n' ' ')"
  done
fi
if [ "$what" = compare ]; then
  for d in ${HPT_DECKS:-teacher-large-sgd teacher-large-adam}; do
    # Checkpoints and traces stay on the host's disk (gigabytes); the comparison files come back.
    (cd "$here" && "$here/bin/hpt" --compare -i "inputs/reference/$d.ini" --set output.dir=/tmp/hpt-compare \
      --set compare.seeds="${HPT_SEEDS:-1,2,3}" --set run.print_every=100000 > "$out/compare_$d.log" 2>&1)
    summary "compare $d (CUDA): rc=$? $(grep -E '^saving shown' "$out/compare_$d.log")"
    mkdir -p "$out/compare"; cp /tmp/hpt-compare/*_compare.h5 "$out/compare/" 2>/dev/null
  done
fi
if [ "$what" = profile ] && command -v ncu > /dev/null; then
  # One launch of each rollout variant the dispatcher picks on the GPU: small (persistent) and batch
  # (tiled); the kernel is found by its demangled name.
  for v in "persistent 1 200" "tiled 1024 20"; do
    set -- $v
    (cd "$here" && timeout 300 ncu --clock-control none --kernel-name-base demangled -k "regex:ensemble_rollout_$1" -c 1 \
      --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis \
      "$here/bin/hpt" -i inputs/rollout.ini --set rollout.model= --set rollout.scenarios=$2 --set rollout.horizon=$3 \
      --set rollout.write_paths=false --set output.dir=/tmp/hpt-profile > "$out/ncu_$1.log" 2>&1)
    summary "ncu $1: rc=$?"
  done
fi
exit $status
