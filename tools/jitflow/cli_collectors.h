/* The entries of a runtime's garbage collector in the code a recording mapped, for the
 * analysis's collector_entry (jitflow/analysis.h): HotSpot's VM operations that run one
 * collection, found by name in libjvm.so's symbol table. */
#ifndef JITFLOW_CLI_COLLECTORS_H
#define JITFLOW_CLI_COLLECTORS_H

#include <stdint.h>

#include "jitflow/codemap.h"

struct jf_cli_collectors;

struct jf_cli_collectors *jf_cli_collectors_new(void);
void jf_cli_collectors_free(struct jf_cli_collectors *c);

/* Whether the code at addr in map is libjvm's (a runtime's own code, not a library). */
int jf_cli_collectors_is_vm(const char *section_name);
/* Whether addr in map is the first instruction of a collector entry (the file's symbols
 * are read once per file; a file that cannot be read has none). */
int jf_cli_collector_entry(struct jf_cli_collectors *c, struct jf_codemap *map, uint64_t addr);

#endif
