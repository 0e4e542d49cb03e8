#!/usr/bin/env bash
# Times the `overhead` bench of a base revision against the working tree's, in alternating
# rounds, so that the machine's drift (a shared VM moves by 2x between states) hits both alike.
# Prints each round's medians in ns, then each case's median over the rounds, side by side.
#
#   scripts/bench_ab.sh BASE ROUNDS [divan filters and options...]
#   scripts/bench_ab.sh HEAD 4 floor_serde run1_text loop_10_steps --skip stream
#
# Compare within one invocation only: which cases run before a case in the same process moves
# its figure (the allocator's state), so keep the filters the same across invocations too.
#
# With `instructions` for ROUNDS, counts instead the instructions one run of each named case
# costs in each binary (callgrind, needs valgrind: 300 samples of 10 runs less 100 samples, so the
# harness's own setup drops out). Deterministic, where the times move by 5-10% between builds:
#   scripts/bench_ab.sh ae87a4c instructions run1_text loop_10_steps
set -euo pipefail

if [ $# -lt 2 ]; then
    sed -n '2,15p' "$0"
    exit 2
fi
base=$1
rounds=$2
shift 2
root=$(git rev-parse --show-toplevel)
checkout=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$checkout" >/dev/null 2>&1 || true; rm -rf "$checkout"' EXIT
git -C "$root" worktree add --quiet --detach "$checkout" "$base"

# Builds the bench in $1 with its own target directory $2 (kept, so a second run builds only what
# changed); prints the bench binary's path, or cargo's output and fails.
build() {
    local log
    log=$(mktemp)
    if ! (cd "$1" && CARGO_TARGET_DIR=$2 cargo bench -p agent-core --bench overhead --no-run) >"$log" 2>&1; then
        cat "$log" >&2
        rm -f "$log"
        return 1
    fi
    sed -n 's/.*Executable .*(\(.*\))$/\1/p' "$log"
    rm -f "$log"
}
before=$(build "$checkout" "$root/target/bench-ab-base")
after=$(build "$root" "$root/target")

if [ "$rounds" = instructions ]; then
    # Instructions of `--sample-count $3` samples of case $2 in binary $1.
    collected() {
        valgrind --tool=callgrind --callgrind-out-file=/dev/null "$1" --bench --sample-size 10 \
            --sample-count "$3" --exact "overhead::$2" 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
    }
    echo "instructions a run: case base head"
    for case in "$@"; do
        counts=()
        for binary in "$before" "$after"; do
            counts+=($((($(collected "$binary" "$case" 300) - $(collected "$binary" "$case" 100)) / 2000)))
        done
        printf "%-28s %8s %8s\n" "$case" "${counts[0]}" "${counts[1]}"
    done
    exit 0
fi

# One run of a binary: `name=median_ns` for each case it ran.
medians() {
    "$1" --bench --sample-size 32 --sample-count 3000 "${@:2}" 2>&1 |
        sed 's/│/|/g' | awk -F'|' '/[├╰]─/ {
            split($1, name, " "); split($3, time, " ")
            scale = time[2] == "µs" ? 1000 : time[2] == "ms" ? 1e6 : 1
            printf "%s=%.0f ", name[2], time[1] * scale
        }'
}

results=$(mktemp)
for round in $(seq "$rounds"); do
    for side in base head; do
        binary=$([ $side = base ] && echo "$before" || echo "$after")
        line=$(medians "$binary" "$@")
        echo "round $round $side: $line"
        echo "$side $line" >>"$results"
    done
done
echo "median over $rounds rounds (ns): case base head"
awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); values[kv[1], $1] = values[kv[1], $1] " " kv[2]; cases[kv[1]] = 1 } }
    function median(list,    n, v, i, j, t) {
        n = split(list, v, " "); if (n == 0) return "-"
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] + 0 < v[i] + 0) { t = v[i]; v[i] = v[j]; v[j] = t }
        return v[int((n + 1) / 2)]
    }
    END { for (c in cases) printf "%-28s %8s %8s\n", c, median(values[c, "base"]), median(values[c, "head"]) }' "$results" | sort
rm -f "$results"
