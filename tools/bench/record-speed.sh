#!/usr/bin/env bash
# Speed of `jitflow record` (emulated) with each backend against QEMU alone, on the same
# programs, in one run: medians of RUNS runs each (default 3) of the wall time and of the
# CPU time (user + system, QEMU and recorder together), guest instructions per second (the
# recording's own count) and the ratios to plain qemu-x86_64. On a shared machine the CPU
# columns are the steadier ones.
#   tools/bench/record-speed.sh [BUILD_DIR] [RUNS]
# Programs: fib(28) (static C), the minivm example nested_loops (interpreter + tracing
# JIT); if installed, PyPy on a small loop and Node on a small loop. LOG_RUNS (default
# RUNS) sets the runs of the slow log backend, LOG_SKIP (a regular expression) the programs
# it is not run on (Node: ~600 M instructions are many minutes of log); BACKENDS (default
# "log plugin") which run. ARCH=aarch64: the AArch64 builds of fib(32) and threadstart
# (tests/programs, built by tools/setup.sh --tests) recorded as ETMv4 against
# qemu-aarch64 alone (plugin only), and LuaJIT's arm64 JIT on a small loop (luajit:arm64
# unpacked from build/arm64-debs, which tools/setup.sh --tests fills): recorded as a user
# gets it, with jitflow's module describing its traces, against qemu-aarch64 running the
# same luajit without the module.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(realpath "${1:-build}")
runs=${2:-3}
log_runs=${LOG_RUNS:-$runs}
arch=${ARCH:-x86_64}
backends=${BACKENDS:-log plugin}
jf="$build/tools/jitflow"
qemu=("${JITFLOW_QEMU:-qemu-x86_64}")
if [ "$arch" = aarch64 ]; then
	backends=plugin
	qemu=("${JITFLOW_QEMU_AARCH64:-qemu-aarch64}" -L "${JITFLOW_AARCH64_SYSROOT:-/usr/aarch64-linux-gnu}")
fi
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
cat > "$tmp/loop.lua" <<'LUA'
local function run(n)
	local s = 0
	for i = 0, n - 1 do
		if i % 7 == 3 then s = s + 2 else s = s + bit.band(i, 5) end
	end
	return s
end
print(run(3000000))
LUA

# name|command... (run in $tmp)
programs=("fib(28)|$build/tests/programs/recprog_fib 28"
          "minivm nested_loops|$build/tools/minivm/minivm --zone-dir . $src/tools/minivm/examples/nested_loops.mvm")
command -v pypy3 >/dev/null && programs+=("pypy3 loop.py|$(command -v pypy3) loop.py")
command -v node >/dev/null && programs+=("node loop.js|$(command -v node) loop.js")
if [ "$arch" = aarch64 ]; then
	programs=("fib(32) aarch64|$build/tests/programs/a64_fib 32"
		  "threadstart aarch64|$build/tests/programs/a64_threadstart")
	if ls "$build"/arm64-debs/luajit_*_arm64.deb > /dev/null 2>&1; then
		for deb in "$build"/arm64-debs/*luajit*_arm64.deb; do dpkg-deb -x "$deb" "$tmp/arm64"; done
		# the guest's loader finds libluajit there (the host's tools skip the arm64 files)
		export LD_LIBRARY_PATH="$tmp/arm64/usr/lib/aarch64-linux-gnu"
		programs+=("luajit loop.lua arm64|$tmp/arm64/usr/bin/luajit loop.lua")
	fi
fi

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
now() { date +%s.%N; }

# times COUNT command...: "wall cpu" seconds per line (GNU time; cpu includes children)
times() {
	local n=$1 i; shift
	for ((i = 0; i < n; i++)); do
		(cd "$tmp" && /usr/bin/time -f "%e %U %S" -o "$tmp/time" "$@" > /dev/null 2>> "$tmp/stderr")
		awk '{ print $1, $2 + $3 }' "$tmp/time"
	done
}
# medians of both columns: "wall cpu"
medians() {
	local f=$tmp/samples
	cat > "$f"
	echo "$(cut -d' ' -f1 "$f" | median) $(cut -d' ' -f2 "$f" | median)"
}

printf "%-22s %-7s %12s %8s %8s %9s %9s %7s %7s\n" program how instructions "wall s" "cpu s" \
	"M insn/s" "(by cpu)" "x QEMU" "(cpu)"
row() { # program how instructions wall cpu qemu-wall qemu-cpu
	awk -v p="$1" -v b="$2" -v i="$3" -v w="$4" -v c="$5" -v qw="$6" -v qc="$7" 'BEGIN {
		if (c <= 0) c = 0.001
		printf "%-22s %-7s %12d %8.3f %8.3f %9.1f %9.1f %7.1f %7.1f\n", p, b, i, w, c,
		       i / w / 1e6, i / c / 1e6, w / qw, c / qc }'
}
for entry in "${programs[@]}"; do
	name=${entry%%|*}
	read -r -a cmd <<< "${entry#*|}"
	read -r qwall qcpu < <(times "$runs" "${qemu[@]}" "${cmd[@]}" | medians)
	insns=0
	for backend in $backends; do
		n=$runs
		if [ "$backend" = log ]; then
			n=$log_runs
			if [ -n "${LOG_SKIP:-}" ] && [[ $name =~ $LOG_SKIP ]]; then
				printf "%-22s %-7s (not run: LOG_SKIP)\n" "$name" log
				continue
			fi
		fi
		read -r wall cpu < <(times "$n" "$jf" record --emulate --backend="$backend" \
			-o "$tmp/rec-$backend" -- "${cmd[@]}" | medians)
		if [ "$arch" = aarch64 ]; then
			insns=$(awk '$1 == "instructions" { print $3 }' "$tmp/rec-$backend/recording.txt")
		else
			insns=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["instructions"])' \
				"$tmp/rec-$backend/manifest.json")
		fi
		rm -rf "$tmp/rec-$backend"
		row "$name" "$backend" "$insns" "$wall" "$cpu" "$qwall" "$qcpu"
	done
	row "$name" qemu "$insns" "$qwall" "$qcpu" "$qwall" "$qcpu"
done
echo "(qemu: ${qemu[0]} alone, its instruction count is the last recording's; $runs runs" \
     "each, log backend $log_runs; $(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg))"
