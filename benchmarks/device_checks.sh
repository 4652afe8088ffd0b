#!/usr/bin/env bash
# The benchmarks that need a machine with a GPU and many cores, in one call.
#
#   benchmarks/device_checks.sh prepare        # here: builds devdata/ (wheels, streams, text, vocabularies)
#   benchmarks/device_checks.sh run OUT_DIR    # there: from the repository root, with devdata/ beside it
#
# `run` installs the wheels (no network needed) and runs the parts named in PARTS (default: all,
# in this order): `peers`, bench_peers.py on English and Sinhala (1 and 2 threads, on a machine with
# nothing else running); `threads`, encode_batch from 1 to 16 threads (bench_threads.py); `gpt`, a
# check of the GPU model on 20 steps, then the small GPT of gpt.py (GPT_SIZE, default base) on every
# stream of devdata/lm, seed 0 for all and seed 1 for the ones named in MORE_SEEDS while the
# deadline allows. The CPU parts run before the GPU's, never beside them. Results land in OUT_DIR.
# `prepare` takes LM_LANGS (default "si hi"): the languages whose streams are written.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

case "${1:-}" in
prepare)
    python=${PYTHON:-.venv/bin/python}
    data=${WWHO_SHARED_DATA:-../shared/data}
    device_python=${DEVICE_PYTHON:-python3.12}
    mkdir -p devdata/whl devdata/peers devdata/data/tiktoken devdata/data/corpora/en devdata/data/corpora/si
    grep -qx '/devdata/' .git/info/exclude 2>/dev/null || echo '/devdata/' >>.git/info/exclude
    rm -f devdata/whl/*.whl devdata/peers/*.whl
    VIRTUAL_ENV=$PWD/.venv .venv/bin/maturin build --release -i "$device_python" -o devdata/whl
    # The exact peers for bench_peers.py, for the device's Python (it has no network). bpe-openai
    # (41 MB: it carries its own vocabulary) does not fit the transfer; bench_peers.py skips it.
    "$python" -m pip download -q --only-binary=:all: --no-deps -d devdata/peers \
        --python-version "${device_python#python}" --implementation cp \
        --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
        tiktoken fastokens quicktok-v1 riptoken tokenizers regex psutil
    cp "$data/tiktoken/o200k_base.tiktoken" devdata/data/tiktoken/
    xz -6 -T0 -c "$data/corpora/en/news-lk_news.txt" >devdata/data/corpora/en/news-lk_news.txt.xz
    xz -6 -T0 -c "$data/corpora/si/news-bbcsinhala.txt" >devdata/data/corpora/si/news-bbcsinhala.txt.xz
    cat "$data"/corpora/si/news-*.txt | xz -6 -T0 >devdata/si-news.xz
    rm -rf devdata/si-sgpe-32000 devdata/lm
    # bench_languages.py's SGPE 32k for Sinhala (its cache, else trained alone with its recipe:
    # the peers' trainings, which its own run would add, take far longer and are not needed here)
    (cd benchmarks && "../$python" -c 'import bench_languages as b; b.train("si", "si", "sgpe", 32000, b.training_files("si"), False)')
    cp -r .cache/bench_languages/si-sgpe-32000 devdata/
    for lang in ${LM_LANGS:-si hi}; do
        kinds="sgpe sgpe-words pfx words-pfx spm-bpe spm-uni"
        [ "$lang" = hi ] && kinds="$kinds wp-danda wp-punct"
        # shellcheck disable=SC2086
        (cd benchmarks && "../$python" bench_lm.py --langs "$lang" --order 4 --export ../devdata/lm --kinds $kinds)
    done
    du -sh devdata
    ;;
run)
    out=${2:?an output folder}
    start=$(date +%s)
    budget=${BUDGET:-480}  # seconds for the whole run; the GPT waves get what is left
    export PYTHONUNBUFFERED=1
    parts=" ${PARTS:-peers threads gpt} "
    mkdir -p "$out"
    grep -m1 'model name' /proc/cpuinfo || true
    shopt -s nullglob
    wheels=(devdata/whl/*.whl devdata/peers/*.whl)  # peers: absent from an older prepare
    shopt -u nullglob
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$PWD/devdata/site" \
        "${wheels[@]}"
    export PYTHONPATH=$PWD/devdata/site WWHO_SHARED_DATA=$PWD/devdata/data
    for f in devdata/data/corpora/*/*.xz; do [ -f "${f%.xz}" ] || xz -dk "$f"; done
    if [[ $parts == *" peers "* ]]; then
        # shellcheck disable=SC2086
        python3 benchmarks/bench_peers.py ${PEERS_OPTIONS:-} 2>&1 | tee "$out/peers.txt" || echo "bench_peers failed"
    fi
    if [[ $parts == *" threads "* ]]; then
        # shellcheck disable=SC2086
        python3 benchmarks/bench_threads.py --text devdata/si-news.xz --vocab devdata/si-sgpe-32000 \
            ${THREADS_OPTIONS:-} 2>&1 | tee "$out/threads.txt" || echo "bench_threads failed"
    fi
    smoke=skipped
    if [[ $parts == *" gpt "* ]]; then
        nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv,noheader || true
        smoke=ok
        first=$(find devdata/lm -name '*.npz' | sort | head -1)
        # GPT_OPTIONS: --cpu --batch 2 (say) checks this script on a machine without a GPU
        # shellcheck disable=SC2086
        python3 benchmarks/gpt.py --one "$first" --steps 20 --every 10 --size "${GPT_SIZE:-base}" \
            --out "$out/smoke.jsonl" ${GPT_OPTIONS:-} 2>&1 | tee "$out/smoke.txt" || smoke=failed
    fi
    if [ "$smoke" = ok ]; then
        left=$((budget - ($(date +%s) - start)))
        # the tokenizers compared first, so that they come back even if the time runs out
        streams=()
        for kind in words-pfx spm-uni spm-bpe sgpe wp-punct wp-danda pfx sgpe-words; do
            for lang in si hi; do
                [ -f "devdata/lm/$lang-$kind.npz" ] && streams+=("devdata/lm/$lang-$kind.npz")
            done
        done
        # shellcheck disable=SC2086
        python3 benchmarks/gpt.py "${streams[@]}" --steps "${STEPS:-1200}" --seeds 0 1 --jobs "${JOBS:-8}" \
            --size "${GPT_SIZE:-base}" \
            --more-seeds-for ${MORE_SEEDS:-words-pfx wp-punct wp-danda spm-bpe spm-uni} --deadline "$left" \
            --out "$out/gpt.jsonl" ${GPT_OPTIONS:-} 2>&1 | tee "$out/gpt.txt"
    fi
    echo "device checks took $(($(date +%s) - start)) s"
    ;;
*)
    sed -n '2,13p' "$0"
    exit 2
    ;;
esac
