#!/usr/bin/env bash
# Set up a jitflow build from a fresh clone. Safe to run again; it only does what is missing.
#
#   tools/setup.sh           the jitflow command only: the Debian packages it needs (when
#                            missing), then ./build configured and only `jitflow` built, so
#                            the first report comes within minutes on a fresh machine
#   tools/setup.sh --tests   everything the test suite uses: the test tools and runtimes,
#                            every target of ./build, the ASan + UBSan tree build/sanitize
#                            and the clang fuzz tree build/fuzz
#
# In CI (CI=true) warnings are errors. JITFLOW_SANITIZE_PASS=0 and JITFLOW_FUZZ_SMOKE=0 skip
# the second and third trees of --tests (their tests then skip and say so).
set -euo pipefail
cd "$(dirname "$0")/.."

tests=0
case "${1:-}" in
  "") ;;
  --tests) tests=1 ;;
  *) echo "usage: tools/setup.sh [--tests]" >&2; exit 2 ;;
esac

# What building the command needs: the compiler and build tools, and the libraries it links
# (libipt, OpenCSD, libelf, libarchive for perf archive tarballs, capstone, cJSON).
packages=(cmake make pkg-config gcc libc6-dev libipt-dev libopencsd-dev libelf-dev
          libarchive-dev libcapstone-dev libcjson-dev)
# What the tests use on top: cmocka; clang with libclang-rt-14-dev (libFuzzer and clang's
# sanitizer runtimes, only recommended by clang, and recommendations are not installed);
# the oracles (linux-perf, trc_pkt_lister from libopencsd-bin); the programs recorded under
# QEMU user mode (qemu-user, luajit, pypy3, nodejs, python3 for minivm's checks); dpkg-dev
# and file for `cpack -G DEB` (dpkg-shlibdeps); groff-base to render man pages; bzip2 for
# perf archive tarballs; xz-utils for the LuaJIT recording in traces/ (a .tar.xz); time;
# openjdk-17-jdk-headless for HotSpot's JVMTI agent (built when a JDK is there) and its test;
# the AArch64 cross compiler and C library that build the test programs the ETM recorder
# runs under qemu-aarch64; parallel (GNU parallel) to run the warm-up matrix as a batch
# engine would.
if [ $tests = 1 ]; then
  packages+=(libcmocka-dev clang libclang-rt-14-dev linux-perf libopencsd-bin qemu-user luajit
             pypy3 nodejs python3 dpkg-dev file groff-base bzip2 xz-utils time
             openjdk-17-jdk-headless gcc-aarch64-linux-gnu libc6-dev-arm64-cross parallel)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi

build=${JITFLOW_BUILD_DIR:-build}
werror=OFF; [ "${CI:-}" = "true" ] && werror=ON

# Debian's arm64 runtimes for the AArch64 recorder's runtime tests (tests/test_luajit_a64.c,
# tests/test_pypy_a64.c): downloaded, never installed (luajit:arm64 and pypy3:arm64 would
# replace the amd64 binaries), into $build/arm64-debs, which the tests unpack with dpkg-deb
# -x; pypy3 with the arm64 libraries it links that the cross libc lacks. apt-get download
# needs dpkg to know the arm64 architecture (its libraries install beside amd64's:
# multiarch).
arm64_debs=(luajit libluajit-5.1-2 pypy3 pypy3-lib libffi8 libbz2-1.0 libexpat1 zlib1g
            libtinfo6)
if [ $tests = 1 ] && ! ls "$build"/arm64-debs/{luajit,pypy3}_*_arm64.deb >/dev/null 2>&1; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    $sudo dpkg --add-architecture arm64
    $sudo apt-get update -q >&2
  fi
  mkdir -p "$build/arm64-debs"
  (cd "$build/arm64-debs" && apt-get download -q "${arm64_debs[@]/%/:arm64}" >&2)
fi
if [ $tests = 1 ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJITFLOW_WERROR=$werror \
        -DJITFLOW_TESTS=ON >&2
  cmake --build "$build" -j"$(nproc)" >&2
else
  # A tree configured by --tests keeps its tests; a fresh one is configured without them
  # (cmocka and python3 are not installed yet).
  tests_option=()
  [ -f "$build/CMakeCache.txt" ] || tests_option=(-DJITFLOW_TESTS=OFF)
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJITFLOW_WERROR=$werror \
        "${tests_option[@]}" >&2
  cmake --build "$build" -j"$(nproc)" --target jitflow >&2
  exit 0
fi

# The sanitizer pass (docs/fuzzing.md): a second tree with ASan + UBSan, whose tests
# labelled "sanitize" the main suite runs as its test sanitizer_pass.
if [ "${JITFLOW_SANITIZE_PASS:-1}" != 0 ]; then
  cmake -S . -B "$build/sanitize" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJITFLOW_SANITIZE=ON \
        -DJITFLOW_WERROR=$werror >&2
  cmake --build "$build/sanitize" -j"$(nproc)" >&2
fi

# The fuzz targets' short run (fuzz_smoke, docs/fuzzing.md): a clang tree with libFuzzer,
# ASan and UBSan, only the targets built. Not -Werror: clang warns differently from gcc,
# and the main tree already holds the code to gcc's warnings.
if [ "${JITFLOW_FUZZ_SMOKE:-1}" != 0 ]; then
  cmake -S . -B "$build/fuzz" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJITFLOW_FUZZ=ON >&2
  # shellcheck disable=SC2046
  cmake --build "$build/fuzz" -j"$(nproc)" --target $(tools/fuzz/targets.sh) >&2
fi
