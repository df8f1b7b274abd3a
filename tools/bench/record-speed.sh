#!/usr/bin/env bash
# Speed of `jitflow record` (emulated) with each backend against QEMU alone, on the same
# programs, in one run: median wall time of RUNS runs each (default 3), guest instructions
# per second (the recording's own count) and the ratio to plain qemu-x86_64.
#   tools/bench/record-speed.sh [BUILD_DIR] [RUNS]
# Programs: fib(28) (static C), the minivm example nested_loops (interpreter + tracing
# JIT); if installed, PyPy on a small loop and Node on a small loop. LOG_RUNS (default
# RUNS) sets the runs of the slow log backend; BACKENDS (default "log plugin") which run.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(realpath "${1:-build}")
runs=${2:-3}
log_runs=${LOG_RUNS:-$runs}
backends=${BACKENDS:-log plugin}
jf="$build/tools/jitflow"
qemu=${JITFLOW_QEMU:-qemu-x86_64}
tmp=$(mktemp -d /tmp/record-speed-XXXXXX); trap 'rm -rf "$tmp"' EXIT
src=$(pwd)

cat > "$tmp/loop.py" <<'PY'
def run(n):
    s = 0
    for i in range(n):
        if i % 7 == 3:
            s += 2
        else:
            s += i & 5
    return s
print(run(300000))
PY
cat > "$tmp/loop.js" <<'JS'
function run(n) { let s = 0; for (let i = 0; i < n; i++) s += (i % 7 === 3) ? 2 : (i & 5); return s; }
console.log(run(300000));
JS

# name|command... (run in $tmp)
programs=("fib(28)|$build/tests/programs/recprog_fib 28"
          "minivm nested_loops|$build/tools/minivm/minivm --zone-dir . $src/tools/minivm/examples/nested_loops.mvm")
command -v pypy3 >/dev/null && programs+=("pypy3 loop.py|$(command -v pypy3) loop.py")
command -v node >/dev/null && programs+=("node loop.js|$(command -v node) loop.js")

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
now() { date +%s.%N; }

# times COUNT command...: one wall time per line
times() {
	local n=$1 i t0; shift
	for ((i = 0; i < n; i++)); do
		t0=$(now)
		(cd "$tmp" && "$@" > /dev/null 2>> "$tmp/stderr")
		awk -v a="$t0" -v b="$(now)" 'BEGIN { print b - a }'
	done
}

printf "%-22s %-8s %9s %12s %10s %8s\n" program how "median s" instructions "M insn/s" "x QEMU"
for entry in "${programs[@]}"; do
	name=${entry%%|*}
	read -r -a cmd <<< "${entry#*|}"
	plain=$(times "$runs" "$qemu" "${cmd[@]}" | median)
	insns=
	for backend in $backends; do
		n=$runs
		[ "$backend" = log ] && n=$log_runs
		secs=$(times "$n" "$jf" record --emulate --backend="$backend" -o "$tmp/rec-$backend" -- \
			"${cmd[@]}" | median)
		insns=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["instructions"])' \
			"$tmp/rec-$backend/manifest.json")
		rm -rf "$tmp/rec-$backend"
		awk -v p="$name" -v b="record $backend" -v s="$secs" -v i="$insns" -v q="$plain" 'BEGIN {
			printf "%-22s %-8s %9.3f %12d %10.1f %8.1f\n", p, substr(b, 8), s, i, i / s / 1e6, s / q }'
	done
	awk -v p="$name" -v s="$plain" -v i="$insns" 'BEGIN {
		printf "%-22s %-8s %9.3f %12d %10.1f %8.1f\n", p, "qemu", s, i, i / s / 1e6, 1 }'
done
echo "(qemu: qemu-x86_64 alone; its instruction count is the last recording's. $runs runs each," \
     "log backend $log_runs; $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
