/* perf-PID.map: the text symbol files JIT runtimes write for perf (V8 --perf-basic-prof,
 * CPython -X perf, LuaJIT, ...): one "START SIZE NAME" line per code object, START and SIZE
 * in hex (with or without 0x). Names only: no code bytes, no times. Read line by line from
 * a mapping; memory does not grow with the file. */
#ifndef JITFLOW_PERF_MAP_H
#define JITFLOW_PERF_MAP_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include <stddef.h>
#include <stdint.h>

#include "jitflow/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { JF_PERF_MAP_NAME_MAX = 4096 };

struct jf_perf_map_entry {
	uint64_t start, size;
	const char *name;   /* valid until the next call */
	uint64_t line;      /* 1-based */
	uint64_t offset;    /* of the line in the file */
};

struct jf_perf_map_reader;

int jf_perf_map_open(struct jf_perf_map_reader **out, const char *path, struct jf_error *err);
int jf_perf_map_open_memory(struct jf_perf_map_reader **out, const void *data, size_t size,
			    const char *name, struct jf_error *err);
void jf_perf_map_close(struct jf_perf_map_reader *r);

/* 1 = entry filled, 0 = end, -1 = malformed line (err: "FILE:LINE (offset N): expected
 * ..."); reading may continue after an error with the next line. Blank lines are skipped. */
int jf_perf_map_next(struct jf_perf_map_reader *r, struct jf_perf_map_entry *e,
		     struct jf_error *err);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
