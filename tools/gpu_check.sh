#!/usr/bin/env bash
# The GPU checks behind docs/gpu-results.md, as one script (issue 6).
#
# Run from the repository root on a CUDA machine.  Writes into $OUT (default ./gpu-out):
#   probe.json / probe.txt   python -m fampnb probe [--json]
#   bench_probe.txt          benchmarks/bench_probe.py (hook cost; host-sync check on CUDA)
#   pytest.txt               tools/gpu_exactness.py (device histogram == numpy), notebooks 06 and 07
#                            under nbval, and the torch-backed unit tests
#   06-gpu-probe.ipynb       notebook 06 executed there (nbclient), outputs kept
# PY names the interpreter (default python3).  When the folder $WHEELS (default .whl) exists, its
# wheels are installed into /tmp/site first and put on PYTHONPATH (how the lent GPU machine, which has no network, gets
# the Jupyter stack); the repository root is put on PYTHONPATH, so fampnb need not be installed.
# Each step has its own time limit, so one hang cannot take the others' results with it.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
PY=${PY:-python3}
WHEELS=${WHEELS:-.whl}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
if [ -d "$WHEELS" ]; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site "$WHEELS"/*.whl || exit 1
    export PYTHONPATH=/tmp/site:$PWD
else
    export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
fi

step() {  # step SECONDS FILE COMMAND...: run, keep stdout+stderr in FILE, say how it ended
    local limit=$1 file=$2 t0=$SECONDS
    shift 2
    timeout "$limit" "$@" >>"$OUT/$file" 2>&1
    echo "== $* -> exit $? in $((SECONDS - t0)) s" | tee -a "$OUT/$file"
}

{
    date -u
    nvidia-smi || echo "(no nvidia-smi)"
    "$PY" -c 'import sys, torch, numpy, ml_dtypes, matplotlib
print("python", sys.version.split()[0], "| torch", torch.__version__, "| cuda", torch.version.cuda,
      "| numpy", numpy.__version__, "| ml_dtypes", ml_dtypes.__version__,
      "| matplotlib", matplotlib.__version__)'
} >"$OUT/probe.txt" 2>&1
step 120 probe.txt "$PY" -m fampnb probe
timeout 120 "$PY" -m fampnb probe --json >"$OUT/probe.json" 2>"$OUT/probe.json.err"
echo "== probe --json -> exit $?" | tee -a "$OUT/probe.txt"
step 180 bench_probe.txt "$PY" benchmarks/bench_probe.py --hidden 1024
step 60 pytest.txt "$PY" tools/gpu_exactness.py
step 240 pytest.txt "$PY" -m pytest -q -p no:cacheprovider --nbval-lax --nbval-current-env \
    notebooks/06-gpu-probe.ipynb notebooks/07-gradient-histograms.ipynb \
    tests/test_probe.py tests/test_scaler_torch.py tests/test_histogram.py
step 120 probe.txt "$PY" -c '
import sys, nbformat, nbclient
nb = nbformat.read("notebooks/06-gpu-probe.ipynb", as_version=4)
nbclient.NotebookClient(nb, timeout=110, kernel_name="python3",
                        resources={"metadata": {"path": "notebooks"}}).execute()
nbformat.write(nb, sys.argv[1])' "$OUT/06-gpu-probe.ipynb"
ls -l "$OUT"
