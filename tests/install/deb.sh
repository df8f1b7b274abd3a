#!/usr/bin/env bash
# The Debian package: `cpack -G DEB` builds jitflow_VERSION-1_ARCH.deb (into the build
# folder); its control file depends on the libraries jitflow links and on qemu-user; it
# holds the command, both libraries with their sonames, headers, pkg-config and CMake
# files, man pages and completion; and the command unpacked from it runs. (Installing it
# system-wide is left to a person: tests write only under the build folder.)
# usage: deb.sh BUILD_DIR VERSION
set -u
build=$(cd "$1" && pwd)
version=$2
out=$build/install-test-deb
rm -rf "$out"
mkdir -p "$out"
if ! (cd "$build" && cpack -G DEB --config CPackConfig.cmake -B "$out") >"$out/cpack.log" 2>&1; then
  echo "FAIL: cpack -G DEB:"; cat "$out/cpack.log"; exit 1
fi
debs=("$out"/jitflow_"$version"-1_*.deb)
[ -f "${debs[0]}" ] || { echo "FAIL: no jitflow_$version-1_*.deb in $out"; ls "$out"; exit 1; }
deb=${debs[0]}
fail=0

depends=$(dpkg-deb -f "$deb" Depends)
for dep in libipt2 libopencsd1 libelf1 libcapstone4 libcjson1 libc6 qemu-user; do
  # a whole package name in the comma-separated list, with or without a version
  grep -qE "(^|, )$dep( \(|,|$)" <<<"$depends" || { echo "FAIL: Depends lacks $dep: $depends"; fail=1; }
done

contents=$(dpkg-deb -c "$deb" | awk '{print $6}')
for f in usr/bin/jitflow usr/lib/libjitflow.so.0 usr/lib/libjitflow.so.$version usr/lib/libjitflow.a \
         usr/lib/libjitflow-emit.so.0 usr/lib/libjitflow-emit.so.$version usr/lib/libjitflow-emit.a \
         usr/include/jitflow/emitter.h usr/include/jitflow/zone_format.h usr/include/jitflow/decoder.h \
         usr/lib/pkgconfig/jitflow.pc usr/lib/pkgconfig/jitflow-emit.pc \
         usr/lib/cmake/jitflow/jitflowConfig.cmake usr/share/man/man1/jitflow.1 \
         usr/share/man/man1/jitflow-record.1 usr/share/bash-completion/completions/jitflow \
         usr/share/doc/jitflow/README.md; do
  grep -qx "\./$f" <<<"$contents" || { echo "FAIL: $f not in the package"; fail=1; }
done
# ldconfig runs on install and removal; the libraries' sonames are declared (shlibs).
info=$(dpkg-deb -I "$deb")
grep -q 'ldconfig' <<<"$(dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./postinst 2>/dev/null)" ||
  { echo "FAIL: no ldconfig in postinst"; fail=1; }
grep -qw shlibs <<<"$info" || { echo "FAIL: no shlibs file"; fail=1; }

# The command from the unpacked package runs (its libraries are the system's).
dpkg-deb -x "$deb" "$out/root"
got=$("$out/root/usr/bin/jitflow" --version 2>&1)
[ "$got" = "jitflow $version" ] || { echo "FAIL: jitflow --version from the package: '$got'"; fail=1; }

[ $fail = 0 ] && echo "$(basename "$deb"): Depends: $depends; $(wc -l <<<"$contents") entries; jitflow --version: $got"
exit $fail
