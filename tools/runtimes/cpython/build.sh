#!/usr/bin/env bash
# Builds CPython 3.13 with its experimental copy-and-patch JIT, from Debian's
# source package, into a cache folder outside the source tree:
#   $JITFLOW_CPYTHON_CACHE/jit/python          --enable-experimental-jit
#   $JITFLOW_CPYTHON_CACHE/jit-pystats/python  the same plus --enable-pystats
# Each variant is an out-of-tree build of one pristine source tree, so the
# two share sources and differ only in their configure line. A variant that is
# already built is left alone (delete its folder to rebuild it).
#
# Usage: tools/runtimes/cpython/build.sh [jit|jit-pystats|all]   (default all)
set -euo pipefail

cache=${JITFLOW_CPYTHON_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/jitflow/cpython-3.13-jit}
jobs=${JOBS:-$(nproc)}
which_variants=${1:-all}
start=$(date +%s)
say() { echo "cpython-build: $*"; }

# clang/llvm/lld 19 are in bookworm's main archive; CPython 3.13's JIT needs
# clang and llvm-objdump/llvm-readobj of one LLVM release to build its stencils.
need_pkgs=(clang-19 llvm-19 lld-19 dpkg-dev build-essential pkg-config
           libffi-dev libssl-dev zlib1g-dev libbz2-dev liblzma-dev
           libsqlite3-dev libreadline-dev libncurses-dev libgdbm-dev uuid-dev)
missing=()
for p in "${need_pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
    say "installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi

# Python 3.13 is packaged in trixie, not bookworm: a deb-src line for trixie is
# enough to fetch its source package (nothing binary is taken from trixie).
src_list=/etc/apt/sources.list.d/jitflow-trixie-src.list
if ! apt-cache showsrc python3.13 2>/dev/null | grep -q '^Package: python3.13'; then
    say "adding $src_list for python3.13's source package"
    echo 'deb-src http://deb.debian.org/debian trixie main' > "$src_list"
    apt-get update -o Dir::Etc::sourcelist="$src_list" -o Dir::Etc::sourceparts=- \
        -o APT::Get::List-Cleanup=0
fi

mkdir -p "$cache/download"
src="$cache/src"
if [[ ! -f "$src/configure" ]]; then
    (cd "$cache/download" && apt-get source --download-only python3.13)
    orig=$(ls "$cache/download"/python3.13_*.orig.tar.* | head -1)
    say "unpacking $(basename "$orig") (upstream sources of the Debian package)"
    rm -rf "$src.tmp" && mkdir -p "$src.tmp"
    tar -xf "$orig" -C "$src.tmp" --strip-components=1
    # 3.13 pins LLVM 18 for its stencils; bookworm has 19, which builds the same
    # 3.13 stencils correctly (the JIT's own test suite and pystats runs agree).
    sed -i 's/^_LLVM_VERSION = 18$/_LLVM_VERSION = 19/' "$src.tmp/Tools/jit/_llvm.py"
    grep -q '^_LLVM_VERSION = 19$' "$src.tmp/Tools/jit/_llvm.py" ||
        { say "Tools/jit/_llvm.py has no '_LLVM_VERSION = 18' line to patch"; exit 1; }
    mv "$src.tmp" "$src"
fi
say "sources: $src ($(cat "$src/Include/patchlevel.h" | sed -n 's/^#define PY_VERSION[[:space:]]*"\(.*\)"/\1/p'))"

build_variant() {
    local name=$1; shift
    local dir="$cache/$name"
    if [[ -x "$dir/python" && -f "$dir/jit_stencils.h" && -f "$dir/.jitflow-built" ]]; then
        say "$name: already built in $dir"
        return
    fi
    local t0; t0=$(date +%s)
    rm -rf "$dir" && mkdir -p "$dir"
    # The system python3 regenerates files: configure may otherwise choose a
    # python3.13 found on PATH that cannot run.
    (cd "$dir" && PATH="/usr/lib/llvm-19/bin:$PATH" "$src/configure" --quiet \
        --enable-experimental-jit "$@" \
        PYTHON_FOR_REGEN=/usr/bin/python3 >configure.log)
    (cd "$dir" && PATH="/usr/lib/llvm-19/bin:$PATH" make -j"$jobs" \
        PYTHON_FOR_REGEN=/usr/bin/python3 >make.log 2>&1) ||
        { tail -40 "$dir/make.log"; say "$name: make failed, see $dir/make.log"; exit 1; }
    "$dir/python" -c 'import _opcode, sys; print(sys.version)' >/dev/null
    touch "$dir/.jitflow-built"
    say "$name: built in $(( $(date +%s) - t0 )) s: $dir/python"
}

case $which_variants in
    jit) build_variant jit ;;
    jit-pystats) build_variant jit-pystats --enable-pystats ;;
    all) build_variant jit-pystats --enable-pystats; build_variant jit ;;
    *) echo "usage: $0 [jit|jit-pystats|all]" >&2; exit 2 ;;
esac
say "done in $(( $(date +%s) - start )) s; cache: $cache"
