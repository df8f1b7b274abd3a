#!/usr/bin/env bash
# The CI's short run of every libFuzzer target (ctest's fuzz_smoke): tools/fuzz/campaign.sh
# for JITFLOW_FUZZ_SMOKE_SECONDS (default 4) per target, with seed 1, on the clang tree that
# tools/setup.sh --tests builds in BUILD (build/fuzz), from the seeds alone, in a fresh folder
# inside BUILD. Fails on a NEW crash, leak or hang; OpenCSD 1.3.3's known crashes do not
# fail it (docs/fuzzing.md). Skips (77) when there is no fuzz tree
# (JITFLOW_FUZZ_SMOKE=0 ./tools/setup.sh --tests builds none).
set -uo pipefail
build=${1:?usage: smoke.sh FUZZ_BUILD_DIR}
if [ ! -f "$build/CMakeCache.txt" ]; then
  echo "SKIP: no fuzz build in $build (tools/setup.sh --tests makes it; JITFLOW_FUZZ_SMOKE=0 skips it)"
  exit 77
fi
build=$(cd "$build" && pwd)
rm -rf "$build/smoke"
mkdir -p "$build/smoke"
# A fixed seed: a crash the CI run finds is found again by the same command on any machine
# that runs the target at least as long (JITFLOW_FUZZ_SEED overrides it).
JITFLOW_FUZZ_SEED=${JITFLOW_FUZZ_SEED:-1} JITFLOW_FUZZ_WORK=$build/smoke exec "$(dirname "$0")/campaign.sh" "$build" \
  "${JITFLOW_FUZZ_SMOKE_SECONDS:-4}"
