#include "cs_trace_compare.h"

#include "test_support.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void add(struct cs_items *items, struct cs_item item)
{
	if (items->n == items->cap) {
		items->cap = items->cap ? items->cap * 2 : 256;
		items->v = realloc(items->v, items->cap * sizeof(*items->v));
		if (!items->v)
			fail_msg("out of memory");
	}
	items->v[items->n++] = item;
}

void cs_run_free(struct cs_run *run)
{
	int i;

	for (i = 0; i < 128; i++)
		free(run->id[i].v);
	memset(run, 0, sizeof(*run));
}

/* Lines look like
 *   Idx:21; ID:2; OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0xa10c8:[0xa10cc] num_i(1) ...
 *   Idx:1703; ID:10; OCSD_GEN_TRC_ELEM_ADDR_NACC( 0xffffffc000594ac0 )
 * and errors carry an "(OCSD_ERR_...)" name. */
void cs_run_from_lister(struct cs_run *run, FILE *in)
{
	char line[4096];

	memset(run, 0, sizeof(*run));
	while (fgets(line, sizeof(line), in)) {
		unsigned long long idx, start, end;
		unsigned id, n;
		const char *p;
		struct cs_item it;

		if (strstr(line, "(OCSD_ERR_")) {
			if (strstr(line, "OCSD_ERR_TEST_SS_TO_DECODER"))
				run->setup_errors++;
			else
				run->decode_errors++;
			continue;
		}
		if (sscanf(line, "Idx:%llu; ID:%x;", &idx, &id) != 2 || id >= 128)
			continue;
		/* Cycle counts: CYCLE_COUNT elements, and ranges that carry one. */
		if (strstr(line, "OCSD_GEN_TRC_ELEM_") && (p = strstr(line, "[CC=")) &&
		    sscanf(p, "[CC=%u]", &n) == 1)
			run->cycles[id] += n;
		memset(&it, 0, sizeof(it));
		it.index = idx;
		if ((p = strstr(line, "OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range="))) {
			if (sscanf(p, "OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=%llx:[%llx] num_i(%u)",
				   &start, &end, &n) != 3)
				fail_msg("cannot parse lister line: %s", line);
			it.kind = 'R';
			it.start = start;
			it.end = end;
			it.ninsn = n;
			run->ranges++;
			add(&run->id[id], it);
		} else if ((p = strstr(line, "OCSD_GEN_TRC_ELEM_ADDR_NACC("))) {
			if (sscanf(p, "OCSD_GEN_TRC_ELEM_ADDR_NACC( %llx", &start) != 1)
				fail_msg("cannot parse lister line: %s", line);
			it.kind = 'N';
			it.start = start;
			add(&run->id[id], it);
		}
	}
}

void cs_run_from_lister_snapshot(struct cs_run *run, const char *snapshot_dir,
				 const char *work_dir)
{
	char cmd[4096];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "cd '%s' && trc_pkt_lister -ss_dir '%s' -decode -logstdout",
		 work_dir, snapshot_dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	cs_run_from_lister(run, p);
	assert_int_equal(pclose(p), 0);
}

void cs_run_from_decoder(struct cs_run *run, struct jf_decoder *dec)
{
	struct jf_error err = { { 0 } };
	struct jf_flow f;
	int rc;

	memset(run, 0, sizeof(*run));
	while ((rc = jf_decoder_next(dec, &f, &err)) > 0) {
		struct cs_item it;

		memset(&it, 0, sizeof(it));
		it.index = f.offset;
		if (f.kind == JF_FLOW_BLOCK) {
			it.kind = 'R';
			it.start = f.u.block.start;
			it.end = f.u.block.next;
			it.ninsn = f.u.block.ninsn;
			run->ranges++;
			add(&run->id[f.source & 0x7f], it);
		} else if (f.kind == JF_FLOW_LOST && f.u.lost.reason == JF_LOST_NO_IMAGE) {
			it.kind = 'N';
			it.start = f.ip;
			add(&run->id[f.source & 0x7f], it);
		} else if (f.kind == JF_FLOW_OTHER && !strcmp(f.u.other.name, "cycles")) {
			run->cycles[f.source & 0x7f] += f.u.other.a;
			/* b runs the total, independently kept by the decoder */
			if (f.u.other.b != run->cycles[f.source & 0x7f])
				fail_msg("cycle total %llu, expected %llu",
					 (unsigned long long)f.u.other.b,
					 (unsigned long long)run->cycles[f.source & 0x7f]);
		} else if (f.kind == JF_FLOW_ERROR) {
			if (f.u.error.phase == JF_PHASE_CONTAINER)
				run->setup_errors++;
			else
				run->decode_errors++;
		}
	}
	if (rc < 0)
		fail_msg("decoder failed: %s", err.msg);
}

static void show(const char *who, const struct cs_item *it)
{
	if (!it)
		fprintf(stderr, "  %s: (nothing)\n", who);
	else if (it->kind == 'R')
		fprintf(stderr, "  %s: Idx:%" PRIu64 " range 0x%" PRIx64 ":[0x%" PRIx64 "] num_i(%u)\n",
			who, it->index, it->start, it->end, it->ninsn);
	else
		fprintf(stderr, "  %s: Idx:%" PRIu64 " ADDR_NACC 0x%" PRIx64 "\n", who, it->index,
			it->start);
}

int cs_run_compare(const struct cs_run *expected, const struct cs_run *got, const char *what)
{
	int id;

	for (id = 0; id < 128; id++) {
		const struct cs_items *e = &expected->id[id], *g = &got->id[id];
		size_t i, n = e->n > g->n ? e->n : g->n;

		if (expected->cycles[id] != got->cycles[id]) {
			fprintf(stderr, "%s: trace ID 0x%x: %llu cycles, lister %llu\n", what, id,
				(unsigned long long)got->cycles[id],
				(unsigned long long)expected->cycles[id]);
			return -1;
		}
		for (i = 0; i < n; i++) {
			const struct cs_item *a = i < e->n ? &e->v[i] : NULL;
			const struct cs_item *b = i < g->n ? &g->v[i] : NULL;

			if (a && b && a->kind == b->kind && a->index == b->index &&
			    a->start == b->start && a->end == b->end && a->ninsn == b->ninsn)
				continue;
			fprintf(stderr, "%s: trace ID 0x%x differs at item %zu of %zu/%zu:\n", what,
				id, i, e->n, g->n);
			show("lister", a);
			show("jitflow", b);
			return -1;
		}
	}
	return 0;
}
