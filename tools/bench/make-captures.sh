#!/usr/bin/env bash
# Make the Intel PT inputs of tools/bench/captures-speed.sh, one folder per kind of capture,
# in OUT (outside the source tree; it must not exist or be empty):
#   tools/bench/make-captures.sh [-b BUILD] [-s SCALE] OUT
#
#   clean     foo (../shared/traces/intel-pt) concatenated 1000*SCALE times: no error, no
#             overflow (29 MB at SCALE 1)
#   errors    Unzip (../shared) concatenated 1000*SCALE times: 11 decode errors per copy,
#             each resynchronised at the next PSB (17 MB)
#   damaged   foo concatenated 500*SCALE times, each copy with 8 bytes overwritten at a
#             place that moves from copy to copy: decode errors, lost bytes and
#             resynchronisations scattered over the whole trace (15 MB)
#   filtered  tests/programs/sigbranches recorded by `jitflow record --emulate --backend=log
#             --no-timing --filter=START-END` around the program's own functions:
#             TIP.PGE/TIP.PGD around every call out of the range (libc, the kernel's signal
#             delivery), OVFs (signals the log backend cannot place: docs/recorder.md; 4 to 14);
#             its AUX data concatenated 8*SCALE times (12 MB; recording it takes ~20 s)
#   timed     the same program recorded with timing (TSC, MTC, CYC) and no filter (the
#             plugin backend); its AUX data concatenated 16*SCALE times (12 MB)
#   interp    BUILD/tools/bench_interp_loop (tools/bench/interp_loop.c, an interpreter's
#             dispatch loop: an indirect branch per bytecode) recorded with --no-timing:
#             its AUX data, whole (the input of tools/bench/pt-latency.sh; 12 MB)
#   recording the timed recording itself (perf.data and manifest), for `stat --recording`
#   recording-filtered  the same program recorded with timing and --filter=START-END as
#             for filtered (the plugin backend: 0.75 MB)
#   recording-loop  BUILD/tools/bench_interp_loop (tools/bench/interp_loop.c, an
#             interpreter's dispatch loop) recorded with timing: a 15 MB perf.data in
#             64 KiB AUX buffers (42 M instructions; recording it takes ~5 s)
#
# Each raw-trace folder holds `trace` (the Intel PT stream; every copy starts with a PSB,
# so a concatenation is a valid stream), `image` (the code bytes) and `base` (the address
# of image's first byte): the same inputs for jitflow (--raw image:base --pt trace),
# libipt_block_stat and libxdc's driver. The recorded program is static and not PIE, so its
# executable segment, cut out of the ELF file, is its code at fixed addresses.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=build scale=1
while getopts b:s: opt; do
	case $opt in
	b) build=$OPTARG ;;
	s) scale=$OPTARG ;;
	*) sed -n '2,34p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# = 1 ] || { sed -n '2,34p' "$0" >&2; exit 2; }
out=$1
shared=../shared/traces/intel-pt
jf="$build/tools/jitflow"
prog="$build/tests/programs/recprog_sigbranches"
loop="$build/tools/bench_interp_loop"
[ -d "$shared" ] || { echo "make-captures: $shared not found (needs ../shared/traces)" >&2; exit 1; }
[ -x "$jf" ] && [ -x "$prog" ] && [ -x "$loop" ] ||
	{ echo "make-captures: build $build first" >&2; exit 1; }
case "$(realpath -m "$out")/" in
"$(realpath .)"/*) echo "make-captures: $out is inside the source tree" >&2; exit 1 ;;
esac
mkdir -p "$out"
[ -z "$(ls -A "$out")" ] || { echo "make-captures: $out is not empty" >&2; exit 1; }
out=$(realpath "$out")
# shellcheck source=tools/bench/capture-helpers.sh
. tools/bench/capture-helpers.sh

# repeat N FILE: FILE concatenated N times, on stdout
repeat() {
	local i
	for ((i = 0; i < $1; i++)); do cat "$2"; done
}

# kind NAME IMAGE BASE: a folder with image and base; the trace is written by the caller
kind() {
	mkdir "$out/$1"
	cp "$2" "$out/$1/image"
	echo "$3" > "$out/$1/base"
}

kind clean "$shared/foo/data" 0x7ffff7819000
repeat $((1000 * scale)) "$shared/foo/trace" > "$out/clean/trace"

kind errors "$shared/Unzip/data" 0x400000
repeat $((1000 * scale)) "$shared/Unzip/trace" > "$out/errors/trace"

kind damaged "$shared/foo/data" 0x7ffff7819000
python3 - "$shared/foo/trace" $((500 * scale)) > "$out/damaged/trace" <<'EOF'
import sys
trace = open(sys.argv[1], "rb").read()
out = sys.stdout.buffer
for i in range(int(sys.argv[2])):
    copy = bytearray(trace)
    # Past the first PSB+ (so each copy synchronises), somewhere else in every copy.
    at = 64 + (i * 7919) % (len(copy) - 80)
    copy[at:at + 8] = bytes((0x5a + i + k) & 0xff for k in range(8))
    out.write(copy)
EOF

# The program's own functions (tests/programs/sigbranches.c): from op_add to the end of main.
range=$(nm -n "$prog" | awk '
	$3 == "op_add" { from = $1 }
	seen_main && !to { to = $1 }
	$3 == "main" { seen_main = 1 }
	END { printf "0x%s-0x%s", from, to }')
"$jf" record --emulate --backend=log --no-timing --filter="$range" -o "$out/filtered.rec" -- "$prog" > /dev/null
"$jf" record --emulate -o "$out/recording" -- "$prog" > /dev/null
"$jf" record --emulate --filter="$range" -o "$out/recording-filtered" -- "$prog" > /dev/null
"$jf" record --emulate -o "$out/recording-loop" -- "$loop" > /dev/null
"$jf" record --emulate --no-timing -o "$out/interp.rec" -- "$loop" > /dev/null
for k in filtered timed; do
	mkdir "$out/$k"
	exec_segment "$prog" "$out/$k/image" > "$out/$k/base"
done
mkdir "$out/interp"
exec_segment "$loop" "$out/interp/image" > "$out/interp/base"
aux_data "$out/interp.rec/perf.data" > "$out/interp.aux"
mv "$out/interp.aux" "$out/interp/trace"
aux_data "$out/filtered.rec/perf.data" > "$out/filtered.aux"
repeat $((8 * scale)) "$out/filtered.aux" > "$out/filtered/trace"
aux_data "$out/recording/perf.data" > "$out/timed.aux"
repeat $((16 * scale)) "$out/timed.aux" > "$out/timed/trace"
rm -rf "$out/filtered.rec" "$out/filtered.aux" "$out/timed.aux" "$out/interp.rec" "$out/interp.aux"
for k in clean errors damaged filtered timed interp; do
	printf '%-9s %10d bytes of trace\n' "$k" "$(stat -c %s "$out/$k/trace")"
done
