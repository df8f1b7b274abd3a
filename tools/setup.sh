#!/usr/bin/env bash
# Set up a jitflow build from a fresh clone: install the Debian packages it needs (when
# missing), then configure and build into ./build. Safe to run again; it only does what is
# missing. In CI (CI=true) warnings are errors.
set -euo pipefail
cd "$(dirname "$0")/.."

# dpkg-dev and file: `cpack -G DEB` (dpkg-shlibdeps); groff-base: the install test renders
# man pages; libarchive-dev and bzip2: perf archive tarballs; xz-utils: the LuaJIT recording
# in traces/ is kept as a .tar.xz; libclang-rt-14-dev: libFuzzer and clang's sanitizer
# runtimes (only recommended by clang, and recommendations are not installed).
packages=(cmake pkg-config gcc clang libclang-rt-14-dev libipt-dev libopencsd-dev libopencsd-bin luajit libelf-dev
          libcapstone-dev libcmocka-dev qemu-user linux-perf nodejs time python3 libcjson-dev
          pypy3 dpkg-dev file groff-base libarchive-dev bzip2 xz-utils openjdk-17-jdk-headless)
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
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJITFLOW_WERROR=$werror >&2
cmake --build "$build" -j"$(nproc)" >&2

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
