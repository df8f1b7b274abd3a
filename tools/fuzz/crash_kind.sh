#!/usr/bin/env bash
# Sorts a replayed crash by its stack: reads the sanitizer's or libFuzzer's report on stdin
# and prints "known OpenCSD FUNCTION" when the crash is one of OpenCSD 1.3.3's own bugs
# that docs/fuzzing.md lists, else "NEW".
#
# Known means: in the report's first stack, the frames from the crash down to the first
# frame of ours (the fuzz target's binary: jitflow, its callbacks that OpenCSD calls
# included) all lie in OpenCSD's libraries (libopencsd*.so), and one of them is a listed
# function. Frames of the sanitizer runtime, libFuzzer's signal handling, the allocator
# and libc above them are passed over: they are where a report starts, not where the bug
# is. Any other stack, or one with no frame in OpenCSD, is NEW.
set -uo pipefail

# docs/fuzzing.md, "Known crashes inside OpenCSD 1.3.3"
known='TraceFmtDcdImpl::extractFrame|TrcPktDecodeEtmV4I::mispredictAtom|TrcPktDecodeEtmV4I::processException|TrcPktDecodeEtmV4I::cancelElements'
runtime='__asan|__lsan|__ubsan|__sanitizer|__interceptor|fuzzer::|^(malloc|calloc|realloc|free|operator new|operator delete)'
system_lib='/libc\.so|/libpthread|/ld-linux|/libstdc\+\+|/libgcc_s'

awk -v known="$known" -v runtime="$runtime" -v system_lib="$system_lib" '
  # "    #3 0x7f... in FUNCTION ARGS (MODULE+0x...)" or "    #3 0x7f... (MODULE+0x...)"
  /^ *#[0-9]+ / {
    if ($1 == "#0" && frames) exit
    frames++
    fn = ""; module = ""
    if ($3 == "in") { fn = $0; sub(/^ *#[0-9]+ +[^ ]+ +in +/, "", fn) }
    if (match($0, /\(\/[^)]*\)$/)) module = substr($0, RSTART + 1, RLENGTH - 2)
    if (!inside_opencsd && !left) {
      if (fn ~ runtime || module ~ system_lib) next
    }
    if (left) next
    if (module ~ /\/libopencsd[^\/]*\.so/) {
      inside_opencsd = 1
      if (!found && match(fn, known)) found = substr(fn, RSTART, RLENGTH)
      next
    }
    left = 1 # the first frame of ours (or of another library): OpenCSD is left
  }
  END { if (found) print "known OpenCSD " found; else print "NEW" }
'
