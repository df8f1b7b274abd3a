#!/usr/bin/env bash
# tools/fuzz/crash_kind.sh on stacks written as ASan, UBSan and libFuzzer print them: only
# a listed OpenCSD function, reached inside OpenCSD below any frame of the fuzz target's
# own binary, is "known OpenCSD"; jitflow's callbacks that OpenCSD calls, jitflow's own
# ocsd_* functions and unlisted OpenCSD functions are NEW.
# usage: crash_kind.sh SOURCE_DIR
set -u
kind=$1/tools/fuzz/crash_kind.sh
lib=/usr/lib/libopencsd.so.1 # as a report names it; no file is read
failed=0
check() { # check WANT < REPORT
  local got
  got=$("$kind")
  if [ "$got" != "$1" ]; then
    echo "FAIL: $2: got '$got', want '$1'"
    failed=1
  fi
}

check "known OpenCSD TraceFmtDcdImpl::extractFrame" "heap overflow in extractFrame, under memcpy" <<REPORT
==1==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x6
    #0 0x55d1 in __asan_memcpy (/build/fuzz/decoder/fuzz_cs_frames+0x1)
    #1 0x7f01 in TraceFmtDcdImpl::extractFrame() ($lib+0x2)
    #2 0x7f02 in TraceFmtDcdImpl::processTrcData(unsigned int) ($lib+0x3)
    #3 0x55d2 in jf_cs_tree_feed /src/decoder/cs_tree.c:120:9

0x6 is located 0 bytes to the right of 16-byte region
    #0 0x55d3 in malloc (/build/fuzz/decoder/fuzz_cs_frames+0x4)
REPORT

check "known OpenCSD TrcPktDecodeEtmV4I::cancelElements" "a hang: libFuzzer's alarm frames first" <<REPORT
==1== ERROR: libFuzzer: timeout after 20 seconds
    #0 0x55d1 in __sanitizer_print_stack_trace (/build/fuzz/decoder/fuzz_cs_snapshot+0x1)
    #1 0x55d2 in fuzzer::PrintStackTrace() (/build/fuzz/decoder/fuzz_cs_snapshot+0x2)
    #2 0x55d3 in fuzzer::Fuzzer::AlarmCallback() (/build/fuzz/decoder/fuzz_cs_snapshot+0x3)
    #3 0x7f00 (/lib/libc.so.6+0x3bf8f)
    #4 0x7f01 in TrcPktDecodeEtmV4I::cancelElements() ($lib+0x2)
    #5 0x7f02 in TrcPktDecodeEtmV4I::decodePacket() ($lib+0x3)
    #6 0x55d4 in jf_cs_decode /src/decoder/cs_decoder.c:200:5
REPORT

check "NEW" "jitflow's callback that OpenCSD calls" <<REPORT
==1==ERROR: AddressSanitizer: SEGV on unknown address 0x000000000000
    #0 0x55d1 in gen_elem_in /src/decoder/cs_tree.c:38:12
    #1 0x7f01 in TrcPktDecodeEtmV4I::processException() ($lib+0x2)
REPORT

check "NEW" "jitflow's own ocsd_ function" <<REPORT
/src/decoder/cs_decoder.c:85:3: runtime error: shift exponent 64 is too large
    #0 0x55d1 in ocsd_arch /src/decoder/cs_decoder.c:85:3
    #1 0x55d2 in jf_cs_open /src/decoder/cs_decoder.c:140:7
REPORT

check "NEW" "an OpenCSD function not in the list" <<REPORT
==1==ERROR: AddressSanitizer: SEGV on unknown address 0x000000000010
    #0 0x7f01 in TrcPktProcEtmV4I::iPktNoPayload() ($lib+0x2)
    #1 0x55d2 in jf_cs_decode /src/decoder/cs_decoder.c:200:5
REPORT

check "NEW" "a listed function reached only through a frame of ours" <<REPORT
==1==ERROR: AddressSanitizer: heap-use-after-free on address 0x6
    #0 0x55d1 in jf_cs_elem /src/decoder/cs_tree.c:60:2
    #1 0x7f01 in TrcPktDecodeEtmV4I::processException() ($lib+0x2)
REPORT

check "NEW" "no stack at all" <<REPORT
==1==ERROR: LeakSanitizer: detected memory leaks
REPORT

[ "$failed" = 0 ] && echo "crash_kind.sh sorts all 7 stacks as the list says"
exit "$failed"
