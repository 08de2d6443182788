#!/usr/bin/env bash
# A lent GPU's minutes, spent by memrl's written plan (src/memrl/experiments/gpu_plan.py; docs/clusters.md,
# "A lent GPU"). Run from the repository root of the device machine:
#
#     bash benchmarks/gpu_plan.sh MINUTES [--smoke]
#
# It unpacks the plan's run folders from the last sitting (benchmarks/gpu_plan_state/gpu-plan-runs.tar.gz.NN, committed), installs
# the wheels carried in .whl/ (the packages the machine lacks: gymnasium and its farama-notifications), trains
# for MINUTES and leaves in $OUT (default gpu-plan-out/) the packed run folders (parts of at most 15 MB),
# gpu-plan.json (where each run stands) and records/NAME/vN.json for every experiment whose runs have all finished.
set -euo pipefail
minutes=${1:?usage: bash benchmarks/gpu_plan.sh MINUTES [--smoke]}
shift
out=${OUT:-gpu-plan-out}
runs=/tmp/gpu-plan-runs
mkdir -p "$runs"
if compgen -G "benchmarks/gpu_plan_state/gpu-plan-runs.tar.gz.*" >/dev/null; then
  cat benchmarks/gpu_plan_state/gpu-plan-runs.tar.gz.* | tar -xz -C "$(dirname "$runs")"
fi
if compgen -G ".whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site:${PYTHONPATH:-}
fi
export PYTHONPATH=$PWD/src:${PYTHONPATH:-} XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
python3 -m memrl.experiments.gpu_plan "$minutes" "$runs" "$out" "$@"
