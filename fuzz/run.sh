#!/usr/bin/env bash
# Runs lacuna's fuzz targets (cargo-fuzz / libFuzzer), each for RUNS executions, from seed
# corpora written from the repository's tests (examples/fuzz_seeds.rs). A crash, a timeout
# (-timeout seconds per input) or an allocation past -rss_limit_mb fails the run; libFuzzer
# writes the input to fuzz/artifacts/TARGET/.
#
#   fuzz/run.sh [RUNS] [TARGET...]     (default: 1000000 runs, every target)
#
# With FUZZ_QUICK=1 (CI's short pass) the seeds leave out the hostile battery's files, some of
# which are slow by design, and go to corpus-quick/.
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
    sanitizer=()
else
    # Stable: libFuzzer's coverage flags are stable, AddressSanitizer is not (lacuna has no
    # unsafe code of its own to check; panics, timeouts and memory are still caught).
    export RUSTC_BOOTSTRAP=1
    fuzz=(cargo fuzz)
    sanitizer=(--sanitizer none)
fi
corpus=corpus
seed_flags=()
if [ "${FUZZ_QUICK:-0}" = 1 ]; then
    corpus=corpus-quick
    seed_flags=(--without-hostile)
fi
if [ ! -d "$corpus" ]; then
    (cd .. && cargo run --release --quiet --example fuzz_seeds -- "fuzz/$corpus" "${seed_flags[@]}")
fi
for t in "${targets[@]}"; do
    features=()
    max_len=65536
    # A grammar within the limits may take seconds to load in release (`/\w{800}/`, a lexer
    # DFA near its 256 MiB cap: 4.3 s here; `(a|b)*a(a|b){24}`, refused by its determinization
    # cap: 0.7 s), and 5-30 times that in the instrumented fuzz build; a hang is still a hang.
    # libFuzzer's slow-unit report (10 s by default) writes an artifact, which this script counts
    # as a failure: it is set to the timeout, so only an input past the timeout fails the run.
    timeout=20
    if [ "$t" = lark_grammar ] || [ "$t" = json_schema ]; then
        timeout=60
        # Mutations of the battery's 40 KB grammars and megabyte schemas run a few a second;
        # large inputs are the hostile battery's job (tests/hostile), breadth is this one's.
        max_len=8192
    fi
    if [ "$t" = checkpoint ]; then
        features=(--features models)
        max_len=4096
    fi
    # Longer canvases mostly add holes, and C++ canvases of dozens of holes take 50-100 ms each
    # (some run to the target's 2 s deadline).
    if [ "$t" = checker_canvas ]; then
        max_len=128
    fi
    mkdir -p "$corpus/$t"
    "${fuzz[@]}" build "${sanitizer[@]}" "${features[@]}" "$t"
    echo "== $t: $runs runs"
    log=$(mktemp)
    # -entropic_scale_per_exec_time: inputs get less of libFuzzer's attention the slower they
    # run. Without it, once checker_canvas's corpus held hundreds of slow C++ canvases, it ran
    # 10-60 inputs a second; with it, 440-970 (30- and 5-minute runs), its coverage still growing.
    "${fuzz[@]}" run "${sanitizer[@]}" "${features[@]}" "$t" "$corpus/$t" -- \
        -runs="$runs" -timeout="$timeout" -report_slow_units="$timeout" -rss_limit_mb=4096 -max_len="$max_len" -print_final_stats=1 \
        -entropic_scale_per_exec_time=1 \
        >"$log" 2>&1 || true
    grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb|SUMMARY)|panicked|ERROR' "$log" || true
    if [ -n "$(ls "artifacts/$t" 2>/dev/null)" ] || ! grep -q "^Done $runs runs" "$log"; then
        tail -40 "$log" >&2
        echo "== $t: FAILED (inputs, if any, in fuzz/artifacts/$t)" >&2
        exit 1
    fi
    rm -f "$log"
done
