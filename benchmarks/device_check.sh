#!/usr/bin/env bash
# The prepared accelerator check (issue 11): run from the repository root on a machine with a GPU and JAX.
#
#     bash benchmarks/device_check.sh            # about 6 minutes on an H200; results in $OUT (or ./device-out)
#
# DEVICE_SECONDS, CROSS_SECONDS, BEHAVIOUR_SECONDS (0 skips a part) set each part's limit, ITEMS the benchmark's
# groups (benchmarks/device.py --items).
#
# It uses the generated packages from the working tree (PYTHONPATH, no install), so it runs with whatever Python,
# JAX and NumPy the machine has.  Each part has its own time limit, and every part writes its log as it goes, so a
# run cut short keeps what it measured:
#   1. environment: GPU, driver, versions;
#   2. python -m benchmarks.device (SVDs, one PT-TEMPO step at chi = 64 ... 512, PT builds, batches) -> table;
#   3. the cross-package tests on the accelerator (oqupy_jax on the GPU against oqupy_numpy on the host);
#   4. the JAX behaviour tests of TEMPO, PT-TEMPO and gradients, as far as the time allows.
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
[ "${DEVICE_SECONDS:-300}" = 0 ] || timeout "${DEVICE_SECONDS:-300}" "$PY" -m benchmarks.device --budget "${DEVICE_BUDGET:-200}" \
    --items "${ITEMS:-svd,chi,pt,batch,factor,large}" --table "$OUT/device_table.md" 2>&1 | tee "$OUT/device.log"
[ "${CROSS_SECONDS:-120}" = 0 ] || timeout "${CROSS_SECONDS:-120}" "$PY" -m pytest tests/test_cross_package.py -v -p no:cacheprovider --durations=10 \
    2>&1 | tee "$OUT/cross_package_tests.log"
[ "${BEHAVIOUR_SECONDS:-90}" = 0 ] || timeout "${BEHAVIOUR_SECONDS:-90}" "$PY" -m pytest ${BEHAVIOUR_TESTS:-\
    tests/behaviour/test_tempo.py tests/behaviour/test_pt_tempo.py tests/behaviour/test_gradient.py} --package oqupy_jax -v -p no:cacheprovider 2>&1 | tee "$OUT/behaviour_tests.log"
echo "device check done: $(date -u)"
