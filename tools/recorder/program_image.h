/* What the recorder needs to know about the program file itself (libelf): its executable
 * PT_LOAD segments (for MMAP2 records) and the address of the zone emitter's marker
 * function, whose calls become PTW packets. */
#ifndef JITFLOW_RECORDER_PROGRAM_IMAGE_H
#define JITFLOW_RECORDER_PROGRAM_IMAGE_H

#include <stdint.h>

#include <jitflow/error.h>

enum { JF_IMAGE_MAX_SEGMENTS = 16 };

struct jf_image_segment {
	uint64_t addr, len, pgoff;  /* page-aligned, as the loader maps it */
	uint32_t prot;
};

struct jf_program_image {
	int is_static_exec;        /* ET_EXEC without PT_INTERP: loaded where it says */
	int is_pie;                /* ET_DYN: loaded at a base address the loader picks */
	uint64_t entry;            /* e_entry (before relocation) */
	char interp[256];          /* PT_INTERP (the dynamic loader), "" if none */
	int nsegments;
	struct jf_image_segment segments[JF_IMAGE_MAX_SEGMENTS];
	uint64_t marker_addr;      /* jf_emitter_marker, 0 if the program has none */
};

/* An x86-64 program. */
int jf_program_image_load(struct jf_program_image *img, const char *path,
			  struct jf_error *err);
/* A 64-bit program of the ELF machine given (EM_X86_64 or EM_AARCH64). */
int jf_program_image_load_for(struct jf_program_image *img, const char *path, int machine,
			      struct jf_error *err);

#endif
