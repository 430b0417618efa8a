#!/usr/bin/env bash
# Runs lacuna's fuzz targets (cargo-fuzz / libFuzzer), each for RUNS executions, from seed
# corpora written from the repository's tests (examples/fuzz_seeds.rs). A crash, a timeout
# (-timeout seconds per input) or an allocation past -rss_limit_mb fails the run; libFuzzer
# writes the input to fuzz/artifacts/TARGET/.
#
#   fuzz/run.sh [RUNS] [TARGET...]     (default: 1000000 runs, every target)
#
# Needs cargo-fuzz (`cargo install cargo-fuzz`). libFuzzer needs a nightly compiler; where
# there is none, the stable one is told to accept nightly flags (RUSTC_BOOTSTRAP=1).
set -euo pipefail
cd "$(dirname "$0")"
runs=${1:-1000000}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(lark_grammar json_schema canvas_line token_canvas_line checker_canvas tokenizer_json checkpoint)
fi
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    fuzz=(cargo +nightly fuzz)
else
    export RUSTC_BOOTSTRAP=1
    fuzz=(cargo fuzz)
fi
if [ ! -d corpus ]; then
    (cd .. && cargo run --release --quiet --example fuzz_seeds -- fuzz/corpus)
fi
for t in "${targets[@]}"; do
    features=()
    max_len=65536
    if [ "$t" = checkpoint ]; then
        features=(--features models)
        max_len=4096
    fi
    mkdir -p "corpus/$t"
    echo "== $t: $runs runs"
    "${fuzz[@]}" run "${features[@]}" "$t" "corpus/$t" -- \
        -runs="$runs" -timeout=20 -rss_limit_mb=4096 -max_len="$max_len" -print_final_stats=1 \
        2>&1 | grep -E '^(#[0-9]+ *DONE|stat::number_of_executed_units|==[0-9]+==|SUMMARY|Done|INFO: Running|.*(panicked|Timeout|crash|leak|out-of-memory))' || true
    if [ -n "$(ls "artifacts/$t" 2>/dev/null)" ]; then
        echo "== $t: FAILED, inputs in fuzz/artifacts/$t" >&2
        exit 1
    fi
done
