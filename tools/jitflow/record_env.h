/* The environment `jitflow record` sets up for the recorded program (record_env.c). */
#ifndef JITFLOW_TOOLS_RECORD_ENV_H
#define JITFLOW_TOOLS_RECORD_ENV_H

/* Creates out_dir and sets, where the user has not, JITFLOW_ZONE_DIR (out_dir),
 * JITFLOW_EMIT_LIB and LUA_INIT (jitflow's LuaJIT module); for a program named python*,
 * puts jitflow's CPython module first on PYTHONPATH. Returns -1 when out_dir cannot be
 * created. aarch64: the program runs under qemu-aarch64 (JITFLOW_EMIT_LIB is then the
 * library built for AArch64). verbose: say on stderr when LUA_INIT is the user's own. */
int jf_record_setup_env(const char *out_dir, const char *program, int aarch64, int verbose);

#endif
