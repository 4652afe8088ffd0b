#!/usr/bin/env bash
# The benchmarks that need a machine with a GPU and many cores, in one call.
#
#   benchmarks/device_checks.sh prepare        # here: builds devdata/ (a wheel, streams, text, vocabularies)
#   benchmarks/device_checks.sh run OUT_DIR    # there: from the repository root, with devdata/ beside it
#
# `run` installs the wheel (no network needed), checks the GPU model on 20 steps, measures
# encode_batch from 1 to 16 threads (bench_threads.py, before anything else uses the cores), then
# trains the small GPT of gpt.py on every stream of devdata/lm, seed 0 for all and seed 1 for
# the ones named in MORE_SEEDS while the deadline allows. Results land in OUT_DIR.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

case "${1:-}" in
prepare)
    python=${PYTHON:-.venv/bin/python}
    data=${WWHO_SHARED_DATA:-../shared/data}
    mkdir -p devdata/whl devdata/data/tiktoken
    grep -qx '/devdata/' .git/info/exclude 2>/dev/null || echo '/devdata/' >>.git/info/exclude
    rm -f devdata/whl/*.whl
    VIRTUAL_ENV=$PWD/.venv .venv/bin/maturin build --release -i "${DEVICE_PYTHON:-python3.12}" -o devdata/whl
    cp "$data/tiktoken/o200k_base.tiktoken" devdata/data/tiktoken/
    cat "$data"/corpora/si/news-*.txt | xz -6 -T0 >devdata/si-news.xz
    rm -rf devdata/si-sgpe-32000 devdata/lm
    cp -r .cache/bench_languages/si-sgpe-32000 devdata/
    (cd benchmarks && "../$python" bench_lm.py --langs si --order 4 --export ../devdata/lm \
        --kinds sgpe sgpe-words pfx words-pfx spm-bpe spm-uni)
    (cd benchmarks && "../$python" bench_lm.py --langs hi --order 4 --export ../devdata/lm \
        --kinds sgpe sgpe-words pfx words-pfx wp-danda spm-bpe spm-uni)
    du -sh devdata
    ;;
run)
    out=${2:?an output folder}
    start=$(date +%s)
    budget=${BUDGET:-480}  # seconds for the whole run; the GPT waves get what is left
    export PYTHONUNBUFFERED=1
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$PWD/devdata/site" devdata/whl/*.whl
    export PYTHONPATH=$PWD/devdata/site WWHO_SHARED_DATA=$PWD/devdata/data
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv,noheader || true
    smoke=ok
    # GPT_OPTIONS: --cpu --batch 2 (say) checks this script on a machine without a GPU
    # shellcheck disable=SC2086
    python3 benchmarks/gpt.py --one devdata/lm/hi-sgpe.npz --steps 20 --every 10 --out "$out/smoke.jsonl" \
        ${GPT_OPTIONS:-} 2>&1 | tee "$out/smoke.txt" || smoke=failed
    # shellcheck disable=SC2086
    python3 benchmarks/bench_threads.py --text devdata/si-news.xz --vocab devdata/si-sgpe-32000 \
        ${THREADS_OPTIONS:-} 2>&1 | tee "$out/threads.txt" || echo "bench_threads failed"
    if [ "$smoke" = ok ]; then
        left=$((budget - ($(date +%s) - start)))
        # the tokenizers compared first, so that they come back even if the time runs out
        streams=()
        for kind in words-pfx spm-uni spm-bpe sgpe wp-danda pfx sgpe-words; do
            for lang in si hi; do
                [ -f "devdata/lm/$lang-$kind.npz" ] && streams+=("devdata/lm/$lang-$kind.npz")
            done
        done
        # shellcheck disable=SC2086
        python3 benchmarks/gpt.py "${streams[@]}" --steps "${STEPS:-1200}" --seeds 0 1 --jobs "${JOBS:-8}" \
            --more-seeds-for ${MORE_SEEDS:-words-pfx wp-danda spm-bpe spm-uni} --deadline "$left" \
            --out "$out/gpt.jsonl" ${GPT_OPTIONS:-} 2>&1 | tee "$out/gpt.txt"
    fi
    echo "device checks took $(($(date +%s) - start)) s"
    ;;
*)
    sed -n '2,10p' "$0"
    exit 2
    ;;
esac
