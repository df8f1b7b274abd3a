/* The environment `jitflow record` gives the recorded program, so that runtimes describe
 * their code into the recording without extra flags:
 *   JITFLOW_ZONE_DIR  the recording folder: every runtime linked with the emitter writes
 *                     jit-PID.dump there (minivm, or anything calling jf_emitter_open(NULL));
 *   JITFLOW_EMIT_LIB  the emitter shared library, for runtimes that load it (LuaJIT's FFI);
 *                     for an AArch64 program, the one built for AArch64 (imagemap/aarch64);
 *   LUA_INIT          loads jitflow's LuaJIT module (tools/runtimes/luajit) before the
 *                     script: `luajit` runs LUA_INIT first; other Luas ignore it (pcall);
 *   JAVA_TOOL_OPTIONS gains -agentpath: jitflow's JVMTI agent (tools/runtimes/hotspot),
 *                     before the user's own options and agents, which stay;
 *   PYTHONPATH        for programs named python*: tools/runtimes/cpython first, whose
 *                     sitecustomize describes a CPython 3.13 JIT build's code and then
 *                     runs the sitecustomize it hides; the user's PYTHONPATH follows.
 * Each of the first three is set only when the user has not set it; the last two are
 * extended, never replaced. The module and the library are found
 * next to the jitflow binary: in the build tree (tools/runtimes/luajit beside it,
 * ../imagemap/libjitflow-emit.so.0) or installed (../share/lua/5.1, ../lib). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record_env.h"

static int is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The first file dir/candidates[i] that exists, as an absolute path (out: PATH_MAX). */
static int find_beside(const char *dir, const char *const *candidates, char *out)
{
	char path[2 * PATH_MAX];
	size_t i;

	for (i = 0; candidates[i]; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, candidates[i]);
		if (is_file(path) && realpath(path, out))
			return 0;
	}
	return -1;
}

static int binary_dir(char *out, size_t size)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n <= 0)
		return -1;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash || (size_t)(slash - exe) >= size)
		return -1;
	*slash = '\0';
	snprintf(out, size, "%s", exe);
	return 0;
}

static void set_lua_init(int verbose)
{
	static const char *const files[] = { "runtimes/luajit/jitflow.lua",
					     "../share/lua/5.1/jitflow.lua", NULL };
	char bin[PATH_MAX], dir[PATH_MAX], init[2 * PATH_MAX];

	if (getenv("LUA_INIT")) {
		if (verbose)
			fprintf(stderr, "jitflow record: LUA_INIT is set; LuaJIT traces are described "
				"only if the program loads the module itself (luajit -l jitflow)\n");
		return;
	}
	if (binary_dir(bin, sizeof(bin)) < 0 || find_beside(bin, files, dir) < 0)
		return;
	*strrchr(dir, '/') = '\0';
	/* Long brackets: the path needs no escaping. pcall: a Lua without the FFI (or a
	 * program that is not Lua at all) is not disturbed. */
	snprintf(init, sizeof(init),
		 "if jit then local ok, e = pcall(function() package.path = [==[%s/?.lua;]==] .. "
		 "package.path; require('jitflow') end) if not ok then io.stderr:write("
		 "'jitflow: ', tostring(e), '\\n') end end", dir);
	setenv("LUA_INIT", init, 0);
}

static void set_emit_lib(int aarch64)
{
	static const char *const files[] = { "../imagemap/libjitflow-emit.so.0",
					     "../lib/libjitflow-emit.so.0",
					     "../lib/x86_64-linux-gnu/libjitflow-emit.so.0", NULL };
	static const char *const files_a64[] = { "../imagemap/aarch64/libjitflow-emit.so.0",
						 "../lib/aarch64-linux-gnu/libjitflow-emit.so.0",
						 NULL };
	char bin[PATH_MAX], lib[PATH_MAX];

	if (getenv("JITFLOW_EMIT_LIB") || binary_dir(bin, sizeof(bin)) < 0 ||
	    find_beside(bin, aarch64 ? files_a64 : files, lib) < 0)
		return;
	setenv("JITFLOW_EMIT_LIB", lib, 0);
}

/* Every HotSpot JVM reads JAVA_TOOL_OPTIONS (and says so on stderr); other programs do not
 * look at it. The agent goes first, so that the user's options (and agents) still follow
 * and win where they disagree; an agentpath already naming it is left alone. */
static void add_jvmti_agent(void)
{
	static const char *const files[] = { "runtimes/hotspot/libjitflow-jvmti.so",
					     "../lib/libjitflow-jvmti.so",
					     "../lib/x86_64-linux-gnu/libjitflow-jvmti.so", NULL };
	const char *user = getenv("JAVA_TOOL_OPTIONS");
	char bin[PATH_MAX], lib[PATH_MAX], *options;
	size_t size;

	if ((user && strstr(user, "libjitflow-jvmti")) || binary_dir(bin, sizeof(bin)) < 0 ||
	    find_beside(bin, files, lib) < 0 || strchr(lib, ' '))
		return; /* the JVM splits JAVA_TOOL_OPTIONS at spaces */
	size = strlen(lib) + (user ? strlen(user) : 0) + 32;
	options = malloc(size);
	if (!options)
		return;
	snprintf(options, size, "-agentpath:%s%s%s", lib, user && *user ? " " : "",
		 user ? user : "");
	setenv("JAVA_TOOL_OPTIONS", options, 1);
	free(options);
}

static int is_python(const char *program)
{
	const char *base = program ? strrchr(program, '/') : NULL;

	base = base ? base + 1 : program;
	return base && !strncmp(base, "python", 6);
}

static void set_python_path(const char *program)
{
	static const char *const files[] = { "runtimes/cpython/sitecustomize.py", NULL };
	char bin[PATH_MAX], site[PATH_MAX];
	const char *old = getenv("PYTHONPATH");
	char *path;
	size_t len;

	if (!is_python(program) || binary_dir(bin, sizeof(bin)) < 0 ||
	    find_beside(bin, files, site) < 0)
		return;
	*strrchr(site, '/') = '\0';
	len = strlen(site) + (old ? strlen(old) : 0) + 2;
	if (!(path = malloc(len)))
		return;
	snprintf(path, len, "%s%s%s", site, old && *old ? ":" : "", old ? old : "");
	setenv("PYTHONPATH", path, 1);
	free(path);
}

int jf_record_setup_env(const char *out_dir, const char *program, int aarch64, int verbose)
{
	char abs[PATH_MAX];

	if (mkdir(out_dir, 0777) && access(out_dir, F_OK))
		return -1;
	if (!getenv("JITFLOW_ZONE_DIR") && realpath(out_dir, abs))
		setenv("JITFLOW_ZONE_DIR", abs, 0);
	set_emit_lib(aarch64);
	set_lua_init(verbose);
	set_python_path(program);
	add_jvmti_agent();
	return 0;
}
