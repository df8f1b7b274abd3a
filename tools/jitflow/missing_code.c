/* No-image gaps by missing file (see missing_code.h). */
#include "missing_code.h"
#include "cli_inputs.h"
#include "jitflow/json_out.h"

#include <intel-pt.h>
#include <inttypes.h>
#include <string.h>

/* Kernel halves of the 64-bit address spaces jitflow decodes (x86-64 and AArch64 both
 * put the kernel where the top 16 bits are set). */
static int kernel_address(uint64_t ip)
{
	return (ip >> 48) == 0xffff;
}

static int is_gap(const struct jf_flow *f)
{
	if (f->kind == JF_FLOW_LOST)
		return f->u.lost.reason == JF_LOST_NO_IMAGE;
	return f->kind == JF_FLOW_ERROR && f->u.error.phase == JF_PHASE_DECODE &&
	       f->u.error.code == -pte_nomap;
}

static void charge(struct jf_missing_place *p, const struct jf_flow *f)
{
	if (!p->gaps++) {
		p->first_offset = f->offset;
		p->first_ip = f->ip;
	}
}

static struct jf_missing_place *file_place(struct jf_missing_code *m,
					   const struct jf_perf_missing_image *img)
{
	int i;

	for (i = 0; i < m->nfiles; i++)
		if (!strcmp(m->files[i].name, img->name))
			return &m->files[i];
	if (m->nfiles == JF_MISSING_FILES_MAX)
		return &m->unmapped;
	snprintf(m->files[m->nfiles].name, sizeof(m->files[0].name), "%s", img->name);
	snprintf(m->files[m->nfiles].build_id, sizeof(m->files[0].build_id), "%s",
		 img->build_id);
	return &m->files[m->nfiles++];
}

void jf_missing_code_count(struct jf_missing_code *m, const struct jf_cli_inputs *in,
			   const struct jf_flow *f)
{
	size_t i, n;

	/* Asked for every flow: the cheap test first. */
	if (!is_gap(f))
		return;
	n = in->perf_path ? jf_perf_images_nmissing(in->perf_images) : 0;
	m->gaps++;
	snprintf(m->unmapped.name, sizeof(m->unmapped.name), "addresses nothing mapped");
	if (kernel_address(f->ip)) {
		/* Apart from user space, with the kernel's build-id when the file has one. */
		snprintf(m->kernel.name, sizeof(m->kernel.name), "kernel addresses (--kernel)");
		for (i = 0; i < n; i++) {
			const struct jf_perf_missing_image *img =
				jf_perf_images_missing(in->perf_images, i);

			if (!strncmp(img->name, "[kernel.kallsyms]", 17) && img->build_id[0])
				snprintf(m->kernel.build_id, sizeof(m->kernel.build_id), "%s",
					 img->build_id);
		}
		charge(&m->kernel, f);
		return;
	}
	for (i = 0; i < n; i++) {
		const struct jf_perf_missing_image *img = jf_perf_images_missing(in->perf_images, i);

		if (f->ip >= img->addr && f->ip - img->addr < img->len) {
			charge(file_place(m, img), f);
			return;
		}
	}
	charge(&m->unmapped, f);
}

static void text_line(const struct jf_missing_place *p, FILE *out)
{
	if (!p->gaps)
		return;
	fprintf(out, "  %s%s%s%s: %" PRIu64 " gap%s (first at offset 0x%" PRIx64 ", ip 0x%" PRIx64
		")\n", p->name, p->build_id[0] ? " (build-id " : "", p->build_id,
		p->build_id[0] ? ")" : "", p->gaps, p->gaps == 1 ? "" : "s", p->first_offset,
		p->first_ip);
}

void jf_missing_code_print_text(const struct jf_missing_code *m, FILE *out)
{
	int i;

	if (!m->gaps)
		return;
	fprintf(out, "missing code    %" PRIu64 " gaps: decoding stopped for want of these files' "
		"code (the instructions run there are not known)\n", m->gaps);
	for (i = 0; i < m->nfiles; i++)
		text_line(&m->files[i], out);
	text_line(&m->kernel, out);
	text_line(&m->unmapped, out);
}

static void json_place(const struct jf_missing_place *p, FILE *out)
{
	fprintf(out, "{\"name\":");
	jf_json_string(out, p->name);
	fprintf(out, ",\"build_id\":");
	if (p->build_id[0])
		jf_json_string(out, p->build_id);
	else
		fprintf(out, "null");
	fprintf(out, ",\"gaps\":%" PRIu64 ",\"first_offset\":%" PRIu64 ",\"first_ip\":%" PRIu64
		"}", p->gaps, p->first_offset, p->first_ip);
}

void jf_missing_code_print_json(const struct jf_missing_code *m, FILE *out)
{
	int i;

	fprintf(out, ",\"missing_code\":{\"gaps\":%" PRIu64 ",\"files\":[", m->gaps);
	for (i = 0; i < m->nfiles; i++) {
		if (i)
			fputc(',', out);
		json_place(&m->files[i], out);
	}
	fprintf(out, "],\"kernel_gaps\":%" PRIu64 ",\"unmapped_gaps\":%" PRIu64 "}",
		m->kernel.gaps, m->unmapped.gaps);
}
