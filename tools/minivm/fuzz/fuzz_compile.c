/* libFuzzer target for minivm's parser and bytecode compiler: any bytes must give either a
 * program or one "file:line:column: message" error, never a crash, a hang or a leak.
 * Error messages go to stderr; run with -close_fd_mask=2 to keep the output quiet. */
#include <stddef.h>
#include <stdint.h>

#include "mvm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mvm_program *p = mvm_compile("fuzz.mvm", (const char *)data, size);

	mvm_program_free(p);
	return 0;
}
