#!/usr/bin/env bash
# The prepared accelerator check (issues 11 and 31): run from the repository root on a machine with a GPU and JAX.
#
#     bash benchmarks/device_check.sh            # at most 7.5 minutes (the parts' limits); results in $OUT (or ./device-out)
#
# DEVICE_SECONDS, TEST_SECONDS (0 skips a part) set each part's limit, DEVICE_BUDGET the seconds after which the
# benchmark skips its remaining items, ITEMS the benchmark's groups (benchmarks/device.py --items).
#
# It uses the generated packages from the working tree (PYTHONPATH, no install), so it runs with whatever Python,
# JAX and NumPy the machine has.  Each part has its own time limit, and every part writes its log as it goes, so a
# run cut short keeps what it measured:
#   1. environment: GPU, driver, versions;
#   2. python -m benchmarks.device (SVDs, PT builds, batches, sketched and batched SVDs, OQuPy #162's full build)
#      -> device_table.md: every item, then issue 31's accelerator rows beside their goals;
#   3. the tests marked `device` (pytest -m device: cross-package agreement with oqupy_jax on the accelerator,
#      jitted dynamics and batches, gradients, uniform process tensors and stationary correlations), oqupy_jax.
set -u
OUT=${OUT:-device-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
export PYTHONPATH="$PWD/generated/oqupy_numpy/src:$PWD/generated/oqupy_jax/src:$PWD${PYTHONPATH:+:$PYTHONPATH}"
PY=${PYTHON:-python3}
{
    date -u
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1
    "$PY" -c "import sys, jax, numpy, scipy; print(sys.version.split()[0], 'jax', jax.__version__, 'numpy', numpy.__version__, 'scipy', scipy.__version__); print(jax.devices())"
    nproc
} 2>&1 | tee "$OUT/environment.txt"
[ "${DEVICE_SECONDS:-270}" = 0 ] || timeout "${DEVICE_SECONDS:-270}" "$PY" -m benchmarks.device --budget "${DEVICE_BUDGET:-180}" \
    --items "${ITEMS:-svd,pt,batch,factor,large,hard}" --table "$OUT/device_table.md" 2>&1 | tee "$OUT/device.log"
[ "${TEST_SECONDS:-170}" = 0 ] || timeout "${TEST_SECONDS:-170}" "$PY" -m pytest tests -m device --package oqupy_jax -v \
    -p no:cacheprovider --durations=10 2>&1 | tee "$OUT/device_tests.log"
echo "device check done: $(date -u)"
