#include "cli_output.h"

#include <inttypes.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- text, as libipt's ptxed prints it ---------------------------------------------- */

static void print_other_text(FILE *out, const struct jf_flow *f)
{
	const char *n = f->u.other.name;

	if (!strcmp(n, "paging"))
		fprintf(out, "[paging, cr3: %016" PRIx64 "%s]\n", f->u.other.a,
			f->u.other.b ? ", nr" : "");
	else if (!strcmp(n, "vmcs"))
		fprintf(out, "[vmcs, base: %016" PRIx64 "]\n", f->u.other.a);
	else if (!strcmp(n, "mwait"))
		fprintf(out, "[mwait %" PRIx64 " %" PRIx64 "]\n", f->u.other.a, f->u.other.b);
	else if (!strcmp(n, "pwre"))
		fprintf(out, "[pwre c%u.%u%s]\n", (unsigned)((f->u.other.a + 1) & 0xf),
			(unsigned)(((f->u.other.a >> 8) + 1) & 0xf), f->u.other.b ? " hw" : "");
	else if (!strcmp(n, "pwrx"))
		fprintf(out, "[pwrx %s%s%sc%u (c%u)]\n", f->u.other.b & 1 ? "int: " : "",
			f->u.other.b & 2 ? "st: " : "", f->u.other.b & 4 ? "hw: " : "",
			(unsigned)((f->u.other.a + 1) & 0xf),
			(unsigned)(((f->u.other.a >> 8) + 1) & 0xf));
	else if (!strcmp(n, "cbr"))
		fprintf(out, "[cbr: %" PRIx64 "]\n", f->u.other.a);
	else if (!strcmp(n, "mnt"))
		fprintf(out, "[mnt: %" PRIx64 "]\n", f->u.other.a);
	else
		fprintf(out, "[%s]\n", n);
}

static void print_insn_line(void *ctx, uint64_t ip)
{
	struct jf_printer *p = ctx;
	char text[160];

	if (p->format == JF_OUT_JSONL) {
		fprintf(p->out, "{\"kind\":\"insn\",\"ip\":\"0x%" PRIx64 "\"}\n", ip);
		return;
	}
	if (!p->asm_text) {
		/* The hot path of a listing: format by hand, printf is several times slower. */
		static const char hex[] = "0123456789abcdef";
		char line[17];
		int i;

		for (i = 15; i >= 0; i--, ip >>= 4)
			line[i] = hex[ip & 0xf];
		line[16] = '\n';
		fwrite(line, 1, sizeof(line), p->out);
		return;
	}
	if (!jf_insn_disasm(p->insns, (enum jf_isa)p->isa, ip, text, sizeof(text)))
		snprintf(text, sizeof(text), "(bad)");
	fprintf(p->out, "%016" PRIx64 "  %s\n", ip, text);
}

/* One line per instruction of the block, or a reconstruct error where the instructions
 * cannot be followed to the block's last one (the image does not fit the trace). */
static void walk_block(struct jf_printer *p, const struct jf_flow *f)
{
	uint64_t stop = 0;

	p->isa = f->u.block.isa;
	if (jf_block_walk(p->insns, &f->u.block, print_insn_line, p, &stop) < 0) {
		if (p->format == JF_OUT_JSONL)
			fprintf(p->out, "{\"kind\":\"error\",\"phase\":\"reconstruct\",\"offset\":%"
				PRIu64 ",\"ip\":\"0x%" PRIx64 "\",\"message\":\"cannot follow "
				"the block's instructions to its end 0x%" PRIx64 "\"}\n",
				f->offset, stop, f->u.block.last);
		else
			fprintf(p->out, "[%" PRIx64 ", %" PRIx64 ": reconstruct error: cannot "
				"follow the block to its end %016" PRIx64 "]\n",
				f->offset, stop, f->u.block.last);
	}
}

/* JIT code is named by its zone region: "trace 3 v2+0x1c" (version: 1 when loaded, +1
 * per patch), as it is at this point of the trace. */
static const char *jit_region(struct jf_printer *p, uint64_t addr, uint64_t *off,
			      uint32_t *version)
{
	uint64_t start;
	const char *name;

	if (!p->zones)
		return NULL;
	name = jf_zone_image_lookup(p->zones, addr, &start, version);
	if (name)
		*off = addr - start;
	return name;
}

static void print_text(struct jf_printer *p, const struct jf_flow *f)
{
	FILE *out = p->out;

	switch (f->kind) {
	case JF_FLOW_BLOCK:
		if (p->blocks) {
			const char *sym = NULL, *jit;
			uint64_t off = 0;
			uint32_t version = 0;

			jit = jit_region(p, f->u.block.start, &off, &version);
			if (!jit && p->symtab)
				sym = jf_symtab_lookup(p->symtab, f->u.block.start, &off);
			fprintf(out, "%016" PRIx64 " %016" PRIx64 " %5u %s", f->u.block.start,
				f->u.block.last, f->u.block.ninsn,
				jf_block_end_name(f->u.block.end));
			if (jit)
				fprintf(out, "  %s v%u+0x%" PRIx64, jit, version, off);
			else if (sym)
				fprintf(out, "  %s+0x%" PRIx64, sym, off);
			fputc('\n', out);
		} else {
			walk_block(p, f);
		}
		break;
	case JF_FLOW_ENABLED:
		fprintf(out, "[%s]\n", f->u.enabled.resumed ? "resumed" : "enabled");
		break;
	case JF_FLOW_DISABLED:
		fputs("[disabled]\n", out);
		break;
	case JF_FLOW_ASYNC:
		fputs("[interrupt]\n", out);
		break;
	case JF_FLOW_OVERFLOW:
		fputs("[overflow]\n", out);
		break;
	case JF_FLOW_EXEC_MODE:
		fprintf(out, "[exec mode: %s]\n", jf_isa_name(f->u.exec_mode.isa));
		break;
	case JF_FLOW_PTWRITE:
		fprintf(out, "[ptwrite: %" PRIx64 "]\n", f->u.ptwrite.payload);
		break;
	case JF_FLOW_CONTEXT:
		fprintf(out, "[context: pid %d tid %d cpu %d]\n", f->u.context.pid,
			f->u.context.tid, f->u.context.cpu);
		break;
	case JF_FLOW_TIME:
		break;
	case JF_FLOW_OTHER:
		print_other_text(out, f);
		break;
	case JF_FLOW_LOST:
		fprintf(out, "[%" PRIx64 ": lost: %s, %" PRIu64 " bytes]\n", f->offset,
			jf_lost_reason_name(f->u.lost.reason), f->u.lost.bytes);
		break;
	case JF_FLOW_ERROR:
		fprintf(out, "[%" PRIx64 ", %" PRIx64 ": %s: %s]\n", f->offset, f->ip,
			jf_error_phase_name(f->u.error.phase), f->u.error.text);
		break;
	case JF_FLOW_END:
		fputs("[end of trace]\n", out);
		break;
	}
}

/* ---- JSON lines ---------------------------------------------------------------------- */


static int is_arm(uint8_t isa)
{
	return isa == JF_ISA_A64 || isa == JF_ISA_A32 || isa == JF_ISA_T32;
}

static void json_common(FILE *out, const struct jf_flow *f)
{
	fprintf(out, ",\"source\":%u,\"offset\":%" PRIu64, f->source, f->offset);
	if (f->flags & JF_FLOW_HAS_TIME)
		fprintf(out, ",\"time\":%" PRIu64, f->time);
	if (!(f->flags & JF_FLOW_IP_SUPPRESSED))
		fprintf(out, ",\"ip\":\"0x%" PRIx64 "\"", f->ip);
}

static void print_json(struct jf_printer *p, const struct jf_flow *f)
{
	FILE *out = p->out;
	const struct jf_block *b = &f->u.block;

	switch (f->kind) {
	case JF_FLOW_BLOCK:
		if (is_arm(b->isa)) {
			/* CoreSight executed ranges, in OpenCSD's terms (end exclusive). */
			fprintf(out, "{\"kind\":\"range\",\"source\":%u,\"start\":\"0x%" PRIx64
				"\",\"end\":\"0x%" PRIx64 "\",\"insns\":%u}\n", f->source,
				b->start, b->next, b->ninsn);
			break;
		}
		if (!p->blocks) {
			walk_block(p, f);
			break;
		}
		fprintf(out, "{\"kind\":\"block\",\"source\":%u,\"offset\":%" PRIu64
			",\"start\":\"0x%" PRIx64 "\",\"last\":\"0x%" PRIx64 "\",\"end\":\"0x%"
			PRIx64 "\",\"insns\":%u,\"isa\":\"%s\",\"ends_with\":\"%s\"", f->source,
			f->offset, b->start, b->last, b->next, b->ninsn, jf_isa_name(b->isa),
			jf_block_end_name(b->end));
		{
			uint64_t off = 0;
			uint32_t version = 0;
			const char *jit = jit_region(p, b->start, &off, &version);

			if (jit) {
				fputs(",\"region\":", out);
				jf_json_string(out, jit);
				fprintf(out, ",\"version\":%u,\"region_offset\":%" PRIu64, version, off);
			}
		}
		if (f->flags & JF_FLOW_HAS_TIME)
			fprintf(out, ",\"time\":%" PRIu64, f->time);
		fputs("}\n", out);
		break;
	case JF_FLOW_ERROR:
		fprintf(out, "{\"kind\":\"error\",\"phase\":\"%s\"",
			jf_error_phase_name(f->u.error.phase));
		json_common(out, f);
		fprintf(out, ",\"code\":%d,\"message\":", f->u.error.code);
		jf_json_string(out, f->u.error.text);
		fputs("}\n", out);
		break;
	case JF_FLOW_LOST:
		fputs("{\"kind\":\"lost\"", out);
		json_common(out, f);
		fprintf(out, ",\"reason\":\"%s\",\"bytes\":%" PRIu64 ",\"insns\":%" PRIu64 "}\n",
			jf_lost_reason_name(f->u.lost.reason), f->u.lost.bytes, f->u.lost.insns);
		break;
	default:
		fprintf(out, "{\"kind\":\"event\",\"event\":\"%s\"",
			f->kind == JF_FLOW_OTHER ? f->u.other.name : jf_flow_kind_name(f->kind));
		json_common(out, f);
		if (f->kind == JF_FLOW_ENABLED)
			fprintf(out, ",\"resumed\":%s", f->u.enabled.resumed ? "true" : "false");
		else if (f->kind == JF_FLOW_ASYNC)
			fprintf(out, ",\"from\":\"0x%" PRIx64 "\"", f->u.async.from);
		else if (f->kind == JF_FLOW_EXEC_MODE)
			fprintf(out, ",\"mode\":\"%s\"", jf_isa_name(f->u.exec_mode.isa));
		else if (f->kind == JF_FLOW_PTWRITE)
			fprintf(out, ",\"payload\":\"0x%" PRIx64 "\"", f->u.ptwrite.payload);
		else if (f->kind == JF_FLOW_CONTEXT)
			fprintf(out, ",\"pid\":%d,\"tid\":%d,\"cpu\":%d,\"el\":%u,\"vmid\":%u",
				f->u.context.pid, f->u.context.tid, f->u.context.cpu,
				f->u.context.el, f->u.context.vmid);
		else if (f->kind == JF_FLOW_OTHER)
			fprintf(out, ",\"a\":%" PRIu64 ",\"b\":%" PRIu64, f->u.other.a, f->u.other.b);
		fputs("}\n", out);
		break;
	}
}

int jf_print_flow(struct jf_printer *p, const struct jf_flow *f)
{
	/* Events that only restate known state (PSB+) are left out, as ptxed does. */
	if (f->kind != JF_FLOW_BLOCK && (f->flags & JF_FLOW_STATUS_UPDATE))
		return 0;
	if (p->format == JF_OUT_JSONL)
		print_json(p, f);
	else
		print_text(p, f);
	return ferror(p->out) ? -1 : 0;
}

/* ---- progress ------------------------------------------------------------------------ */

static int progress_shown;

void jf_progress(uint64_t done, uint64_t total, uint64_t insns)
{
	static time_t last;
	time_t now;

	if (!isatty(STDERR_FILENO))
		return;
	now = time(NULL);
	if (now == last)
		return;
	last = now;
	if (total)
		fprintf(stderr, "\rdecoding: %3u%% of %" PRIu64 " bytes, %" PRIu64 " instructions",
			(unsigned)(done * 100 / total), total, insns);
	else
		fprintf(stderr, "\rdecoding: %" PRIu64 " instructions", insns);
	progress_shown = 1;
}

void jf_progress_done(void)
{
	if (progress_shown)
		fputs("\r\033[K", stderr);
	progress_shown = 0;
}
