#!/usr/bin/env bash
# Pack what the many-core benchmark (many-core.sh) needs into one file, for a machine that
# has none of this project's libraries (a lent machine with many cores, say):
#   tools/bench/pack-for-machine.sh [-b BUILD] [-x XDC_BENCH] CAPTURES PACK.tar.xz
# PACK holds BUILD's jitflow, libipt_block_stat and bench_pt_latency (and XDC_BENCH, a
# driver of libxdc built outside the repository, as captures-speed.sh takes it), every
# shared library they load but the C library's own (those in a folder apart, for a machine
# whose C library is older), /usr/bin/time, and the six raw captures of CAPTURES (a folder
# made by make-captures.sh: image, base and trace of each). Concatenations are made
# there, not packed: the pack stays small (about 16 MB with the captures at scale 1).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=build xdc=""
while getopts b:x: opt; do
	case $opt in
	b) build=$OPTARG ;;
	x) xdc=$OPTARG ;;
	*) sed -n '2,10p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# = 2 ] || { sed -n '2,10p' "$0" >&2; exit 2; }
caps=$1 pack=$(realpath -m "$2")
progs=("$build/tools/jitflow" "$build/tools/libipt_block_stat" "$build/tools/bench_pt_latency")
[ -z "$xdc" ] || progs+=("$xdc")
for p in "${progs[@]}"; do
	[ -x "$p" ] || { echo "pack-for-machine: $p not found (build it first)" >&2; exit 1; }
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/lib" "$tmp/libc" "$tmp/caps"
cp "${progs[@]:0:3}" "$tmp/bin/"
[ -z "$xdc" ] || cp "$xdc" "$tmp/bin/xdc_bench"
if [ -x /usr/bin/time ]; then cp /usr/bin/time "$tmp/bin/time"; fi
# Each library under the name the programs ask for (ldd's left column).
ldd "${progs[@]}" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' | sort -u |
	while read -r name path; do
		case $name in
		libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.*) cp -L "$path" "$tmp/libc/$name" ;;
		*) cp -L "$path" "$tmp/lib/$name" ;;
		esac
	done
loader=$(ldd "$build/tools/jitflow" | awk '/ld-linux/ { print $1 }')
cp -L "$loader" "$tmp/libc/"
for kind in clean errors damaged filtered timed interp; do
	[ -f "$caps/$kind/trace" ] || { echo "pack-for-machine: $caps/$kind/trace missing (make-captures.sh)" >&2; exit 1; }
	mkdir -p "$tmp/caps/$kind"
	cp "$caps/$kind/image" "$caps/$kind/base" "$caps/$kind/trace" "$tmp/caps/$kind/"
done
tar -C "$tmp" -cf - bin lib libc caps | xz -T0 -6 > "$pack"
echo "$pack: $(stat -c %s "$pack") bytes"
