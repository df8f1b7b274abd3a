#!/bin/sh
# The libFuzzer targets of a -DJITFLOW_FUZZ=ON build, one per line (campaign.sh and the
# CI smoke run, tests/fuzz_smoke.sh, both use this list; docs/fuzzing.md describes each).
cat <<'LIST'
fuzz_pt_decode
fuzz_perf_data
fuzz_perf_cs_etm
fuzz_perf_cs_data
fuzz_cs_snapshot
fuzz_cs_frames
fuzz_zone_reader
fuzz_zone_image
fuzz_zone_analysis
fuzz_pypylog
fuzz_elf_image
fuzz_perf_archive
fuzz_perf_sideband
fuzz_qemu_log
fuzz_plugin_stream
fuzz_etm_flow
fuzz_zone_retime
fuzz_zone_code_read
fuzz_minivm_compile
fuzz_check_reports
fuzz_warmup_inputs
fuzz_recording_dir
fuzz_cpython_stencils
LIST
