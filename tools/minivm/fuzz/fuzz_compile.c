/* libFuzzer target for minivm's parser and bytecode compiler: any bytes must give either a
 * program or one "file:line:column: message" error, never a crash, a hang or a leak.
 * Error messages go to stderr, so run it quietly, e.g.
 *   cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DJITFLOW_FUZZ=ON
 *   cmake --build build-fuzz --target fuzz_minivm_compile
 *   build-fuzz/tools/minivm/fuzz_minivm_compile -close_fd_mask=2 -max_total_time=300 \
 *       CORPUS_DIR tools/minivm/fuzz/corpus */
#include <stddef.h>
#include <stdint.h>

#include "mvm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mvm_program *p = mvm_compile("fuzz.mvm", (const char *)data, size);

	mvm_program_free(p);
	return 0;
}
