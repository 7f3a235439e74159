#!/usr/bin/env bash
# Example Slurm job: the grounding benchmark as an array of shards, then one merge step.
# See docs/running-across-machines.md. From the project's folder on the login node:
#
#   bash ci/slurm-shards.sh                 # submits the array and the merge job that waits for it
#
# Settings (environment variables, all optional):
#   GROUNDING_SHARDS     number of shards (array tasks), default 8
#   GROUNDING_DATASETS   --dataset options, default: the embedded synthetic benchmark
#   GROUNDING_DETECTOR   --detector value, default ocr
#   GROUNDING_GATES      merge gates, default "--min-accuracy 0.20"
#   GROUNDING_OUT        output folder, default grounding-out
#
# Each array task runs `pytest --grounding-shard env`, which reads K/N from SLURM_ARRAY_TASK_ID and
# SLURM_ARRAY_TASK_COUNT (SLURM_ARRAY_TASK_MIN makes --array=0-7 and --array=1-8 the same shards).
#SBATCH --job-name=grounding
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=8
#SBATCH --time=02:00:00
#SBATCH --output=grounding-out/slurm-%A_%a.out
set -euo pipefail

OUT="${GROUNDING_OUT:-grounding-out}"
SHARDS="${GROUNDING_SHARDS:-8}"
step="${1:-submit}"

case "$step" in
submit)
    mkdir -p "$OUT"
    array=$(sbatch --parsable --array="1-$SHARDS" "$0" shard)
    # afterany: a shard that failed or timed out still gets a merged report, marked partial, naming it.
    sbatch --dependency="afterany:$array" --job-name=grounding-merge --gres=none --output="$OUT/merge-%j.out" "$0" merge
    ;;
shard)
    # shellcheck disable=SC2086  # the datasets are several options
    pytest suites/ -p no:cacheprovider \
        ${GROUNDING_DATASETS:-} \
        --detector "${GROUNDING_DETECTOR:-ocr}" \
        --grounding-shard env \
        --grounding-misses xfail \
        --grounding-json "$OUT/shard-$SLURM_ARRAY_TASK_ID.json" \
        --grounding-predictions "$OUT/shard-$SLURM_ARRAY_TASK_ID.jsonl"
    ;;
merge)
    # shellcheck disable=SC2086  # the gates are several options
    python -m pytest_grounding merge "$OUT"/shard-*.json \
        --json "$OUT/report.json" \
        --html "$OUT/report.html" \
        --predictions "$OUT/predictions.jsonl" \
        ${GROUNDING_GATES:---min-accuracy 0.20}
    ;;
*)
    echo "usage: $0 [submit|shard|merge]" >&2
    exit 2
    ;;
esac
