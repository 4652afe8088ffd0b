#!/bin/sh
# Fuzz the compiled core's entry points that take text, bytes or ids, for a bounded time each.
#
#   fuzz/run_cargo.sh [SECONDS_PER_TARGET]   (default 120)
#
# Needs a nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`). Targets (fuzz/cargo/):
#   pretokenize    every named scanner against fancy-regex (tiktoken's engine) on the same pattern
#   encode_decode  encode -> decode gives the text back, both merge rules, special-token semantics;
#                  any bytes merged as one piece (merge_bytes) spell them again
#   decode_ids     arbitrary ids: the tokens' bytes, or the first unknown id and its position
#   tiktoken_file  arbitrary bytes as a .tiktoken file: parsed or refused, then a tokenizer or refused
#   user_regex     an arbitrary user regex on arbitrary text: refused, or pieces that cover the text
#   gguf_arrays    arbitrary bytes as GGUF tokenizer arrays: read or refused; the merge-list finding
#                  equals check_merges; a model without one builds a tokenizer that encodes
# With $WWHO_O200K (default: o200k_base.tiktoken in $WWHO_SHARED_DATA, else ../shared/data beside
# the repository, if present) the tokenizer targets use o200k's real vocabulary. A crash leaves
# its input in fuzz/cargo/artifacts/<target>/ and stops.
set -eu
seconds=${1:-120}
root=$(cd "$(dirname "$0")/.." && pwd)
data=${WWHO_SHARED_DATA:-$root/../shared/data}
if [ -z "${WWHO_O200K:-}" ] && [ -f "$data/tiktoken/o200k_base.tiktoken" ]; then
    WWHO_O200K="$data/tiktoken/o200k_base.tiktoken"
    export WWHO_O200K
fi
cd "$root/fuzz/cargo"
for target in pretokenize encode_decode decode_ids tiktoken_file user_regex gguf_arrays; do
    mkdir -p "corpus/$target"
    echo "== $target: ${seconds}s"
    cargo +nightly fuzz run --fuzz-dir . -O "$target" "corpus/$target" -- -max_total_time="$seconds" \
        -max_len=4096 -rss_limit_mb=4096 -print_final_stats=1 2>&1 \
        | grep -E "^(#[0-9]+.*(DONE|pulse)|stat::|==|SUMMARY|Done)" | tail -8
done
