#!/usr/bin/env bash
# The full ten-class PATE grid as one run (experiments/RESULTS.md): MNIST and Fashion-MNIST, Q in
# {100, 500, 1000}, total epsilon in {1, 2, 4}, total delta 1e-5, every method (GNMax, Confident-GNMax,
# the DaRRM plurality table, the duel family, the noiseless plurality, true labels), a semi-supervised
# student and the supervised baseline per release; teachers trained in the run unless cached.
#
# One `darrm-experiments pate --classes 10` process per data set, started together, one thread each
# (a 2-core machine: one core each). Both use one cache folder, so the DaRRM designs, which depend
# only on (K, C, epsilon, delta, Q, prior), are solved once and shared: the two processes split them
# between them (experiments/cache.py, compute_shared).
#
# Usage: experiments/pate/grid.sh OUT [more `darrm-experiments pate` options, e.g. --draws 1]
# Environment: DATA (folder holding mnist/ and fashion-mnist/; default ../shared/datasets),
#              CACHE (default OUT/cache), DARRM_EXPERIMENTS (the command; default darrm-experiments).
# Writes OUT/<data set>/ (results.json, multiclass.md, ...) and OUT/<data set>.log; prints each
# process's exit status and the total wall time; exits non-zero if either process failed.
set -euo pipefail

if [[ $# -lt 1 || $1 == -* ]]; then
    echo "usage: $0 OUT [darrm-experiments pate options]" >&2
    exit 2
fi
out=$1
shift
data=${DATA:-../shared/datasets}
cache=${CACHE:-$out/cache}
command=${DARRM_EXPERIMENTS:-darrm-experiments}
mkdir -p "$out"

export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1  # one core per process
start=$(date +%s)
declare -A pid
for ds in mnist fashion-mnist; do
    $command pate --dataset "$ds" --classes 10 --queries 100,500,1000 --total-eps 1,2,4 --total-delta 1e-5 \
        --data-dir "$data/$ds" --cache-dir "$cache" --out "$out/$ds" "$@" >"$out/$ds.log" 2>&1 &
    pid[$ds]=$!
done
status=0
for ds in mnist fashion-mnist; do
    if wait "${pid[$ds]}"; then rc=0; else rc=$?; fi
    echo "$ds: exit $rc (log: $out/$ds.log)"
    [[ $rc -eq 0 ]] || status=$rc
done
echo "grid wall time: $(( $(date +%s) - start )) s"
exit $status
