#!/bin/bash
# One GPU session's checks (docs/gpu.md): the device suite, then every bench_gpu.py section beside
# torch CUDA, each under its own time limit. Logs go to ${OUT:-./runs/gpu}. Usage, on a GPU machine
# with CuPy and (optionally) torch CUDA installed, from the repository root:
#     bash benchmarks/gpu_check.sh
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
out=${OUT:-./runs/gpu}; mkdir -p "$out"
t0=$(date +%s)
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$out/env.log" 2>&1
timeout "${PYTEST_T:-300}" python3 -m pytest -m cuda -q -n "${NPROC:-8}" -p no:cacheprovider \
  --tb=short -rfE -o addopts="" tests/gpu > "$out/pytest.log" 2>&1
echo "device tests rc=$? after $(( $(date +%s) - t0 )) s"; tail -1 "$out/pytest.log"
for s in ${BENCH_SECTIONS:-mm bag coalesce add}; do
  timeout "${BENCH_T:-120}" python3 benchmarks/bench_gpu.py --only "$s" --quick --no-wait \
    >> "$out/bench.log" 2>&1
  echo "bench $s rc=$? after $(( $(date +%s) - t0 )) s"
done
grep "^|" "$out/bench.log"
