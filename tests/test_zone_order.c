/* Records out of file order: threads write their own buffers, so a zone file holds runs
 * of records in seq order interleaved out of order. The reader must return every record
 * in seq order (the oracle: the seq each emitter call returned, and a file written by one
 * thread, whose file order is seq order, cut into runs and shuffled here), count and
 * locate missing and duplicated seqs, and fail cleanly on a shuffled file cut short. */
#include "test_support.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "jitflow/emitter.h"
#include "jitflow/zone.h"

enum { THREADS = 4, PER_THREAD = 20000 };

struct writer {
	struct jf_emitter *em;
	pthread_barrier_t *start;
	uint64_t seqs[PER_THREAD];
};

static void *write_events(void *arg)
{
	struct writer *w = arg;
	int i;

	pthread_barrier_wait(w->start);
	for (i = 0; i < PER_THREAD; i++)
		w->seqs[i] = jf_emit_event(w->em, JF_EVENT_ITERATION, (uint64_t)i);
	return NULL;
}

/* Four threads emit at once; read back, the file gives 1, 2, 3, ... with each thread's
 * events (arg 0, 1, 2, ...) at the seqs its calls returned. */
static void test_threads_read_back_in_seq_order(void **state)
{
	static struct writer w[THREADS];
	pthread_barrier_t start;
	pthread_t t[THREADS];
	char dir[512], path[600];
	struct jf_emitter *em;
	struct jf_zone_reader *r;
	struct jf_zone_record rec;
	struct jf_error err;
	uint64_t expect = 1, events = 0;
	const struct jf_zone_stats *st;
	int i, rc;

	snprintf(dir, sizeof(dir), "%s/threads", jf_test_tmpdir());
	mkdir(dir, 0755);
	em = jf_emitter_open(dir, 0);
	assert_non_null(em);
	snprintf(path, sizeof(path), "%s", jf_emitter_path(em));
	pthread_barrier_init(&start, NULL, THREADS);
	for (i = 0; i < THREADS; i++) {
		w[i].em = em;
		w[i].start = &start;
		assert_int_equal(pthread_create(&t[i], NULL, write_events, &w[i]), 0);
	}
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	jf_emitter_close(em);

	assert_int_equal(jf_zone_reader_open(&r, path, &err), 0);
	while ((rc = jf_zone_next(r, &rec, &err)) == 1) {
		if (rec.id == JF_JITDUMP_CODE_CLOSE)
			continue;
		assert_int_equal(rec.seq, expect);
		expect++;
		if (rec.id != JF_ZONE_EVENT)
			continue;
		events++;
		for (i = 0; i < THREADS; i++)
			if (w[i].seqs[rec.u.event.arg] == rec.seq)
				break;
		if (i == THREADS)
			fail_msg("seq %" PRIu64 " (event %" PRIu64 ") was returned to no thread",
				 rec.seq, rec.u.event.arg);
	}
	assert_int_equal(rc, 0);
	assert_int_equal(events, THREADS * PER_THREAD);
	st = jf_zone_reader_stats(r);
	assert_int_equal(st->seq_duplicates, 0);
	assert_int_equal(st->seq_gaps, 0);
	print_message("%" PRIu64 " runs of records in seq order in the file\n", st->runs);
	jf_zone_reader_close(r);
	pthread_barrier_destroy(&start);
}

/* ---- one thread's file, cut into runs and shuffled ------------------------------- */

struct rec_pos { size_t off, size; uint32_t id; uint64_t seq; };

struct file {
	uint8_t *data;
	size_t size, nrecs;
	struct rec_pos recs[64];
};

static void load(struct file *f, const char *path)
{
	size_t off = 40;

	f->data = jf_test_read_file(path, &f->size);
	f->nrecs = 0;
	while (off < f->size) {
		struct rec_pos *p = &f->recs[f->nrecs++];
		uint32_t size;

		assert_true(f->nrecs <= 64);
		memcpy(&p->id, f->data + off, 4);
		memcpy(&size, f->data + off + 4, 4);
		p->off = off;
		p->size = size;
		p->seq = 0;
		if (p->id > JF_ZONE_ID_BASE)
			memcpy(&p->seq, f->data + off + 16, 8);
		off += size;
	}
}

/* Records [from, to) of f appended to out. */
static size_t put(uint8_t *out, size_t at, const struct file *f, size_t from, size_t to)
{
	size_t n = f->recs[to - 1].off + f->recs[to - 1].size - f->recs[from].off;

	memcpy(out + at, f->data + f->recs[from].off, n);
	return at + n;
}

/* A file of one of every record, in seq order. */
static void every_record(struct file *f)
{
	static const uint8_t code[] = { 0x48, 0x31, 0xc0, 0xc3 };
	struct jf_region r = { .name = "trace 1", .addr = 0x7f0000010000, .code = code,
			       .size = sizeof(code), .kind = JF_REGION_TRACE, .trace_id = 1 };
	struct jf_pc_map_entry pc = { 0, 1, 0, 0, 0 };
	char dir[512], path[600];
	struct jf_emitter *em;

	snprintf(dir, sizeof(dir), "%s/shuffle", jf_test_tmpdir());
	mkdir(dir, 0755);
	em = jf_emitter_open(dir, 0);
	assert_non_null(em);
	jf_emit_code_object(em, 1, "f", "f.mvm", 1);                 /* 4 */
	jf_emit_event(em, JF_EVENT_COMPILE_BEGIN, 1);                /* 5 */
	jf_emit_region_load(em, &r);                                 /* CODE_LOAD + 6 */
	jf_emit_guard(em, 1, 1, r.addr + 1, r.addr + 3, 1);          /* 7 */
	jf_emit_pc_map(em, r.addr, &pc, 1);                          /* 8 */
	jf_emit_event(em, JF_EVENT_COMPILE_END, 1);                  /* 9 */
	jf_emit_region_move(em, r.addr, r.addr + 0x1000, sizeof(code)); /* CODE_MOVE + 10 */
	jf_emit_region_free(em, r.addr + 0x1000, sizeof(code));      /* 11 */
	snprintf(path, sizeof(path), "%s", jf_emitter_path(em));
	jf_emitter_close(em);                                        /* 12, CODE_CLOSE */
	load(f, path);
	/* CLOCK MARKER INTERP_RANGE CODE_OBJECT EVENT CODE_LOAD REGION_LOAD GUARD PC_MAP
	 * EVENT CODE_MOVE REGION_MOVE REGION_FREE CLOCK CODE_CLOSE */
	assert_int_equal(f->nrecs, 15);
	assert_int_equal(f->recs[5].id, JF_JITDUMP_CODE_LOAD);
	assert_int_equal(f->recs[10].id, JF_JITDUMP_CODE_MOVE);
}

/* Read data; the (id, seq) of each record into ids/seqs. Returns jf_zone_next's last rc. */
static int read_back(const uint8_t *data, size_t size, uint32_t *ids, uint64_t *seqs,
		     size_t *n, struct jf_zone_stats *stats_out, struct jf_error *err)
{
	struct jf_zone_reader *r;
	struct jf_zone_record rec;
	int rc;

	*n = 0;
	if (jf_zone_reader_open_memory(&r, data, size, "shuffled.dump", err))
		return -1;
	while ((rc = jf_zone_next(r, &rec, err)) == 1) {
		assert_true(*n < 64);
		ids[*n] = rec.id;
		seqs[(*n)++] = rec.seq;
	}
	if (stats_out)
		*stats_out = *jf_zone_reader_stats(r);
	jf_zone_reader_close(r);
	return rc;
}

/* Runs as threads' buffers could have left them: seqs 6-8 and 10-11 (each after its
 * perf record), 9, 1-5, 12 and CODE_CLOSE. Seq goes back twice: three runs. */
static size_t shuffle(const struct file *f, uint8_t *out)
{
	size_t at = 40;

	memcpy(out, f->data, 40);
	at = put(out, at, f, 5, 9);    /* CODE_LOAD REGION_LOAD(6) GUARD(7) PC_MAP(8) */
	at = put(out, at, f, 10, 13);  /* CODE_MOVE REGION_MOVE(10) REGION_FREE(11) */
	at = put(out, at, f, 9, 10);   /* EVENT(9) */
	at = put(out, at, f, 0, 5);    /* CLOCK(1) .. EVENT(5) */
	at = put(out, at, f, 13, 15);  /* CLOCK(12) CODE_CLOSE */
	return at;
}

static void test_shuffled_runs_read_in_seq_order(void **state)
{
	struct file f;
	uint8_t *out;
	uint32_t ids[64];
	uint64_t seqs[64];
	struct jf_zone_stats st = { 0 };
	struct jf_error err = { "" };
	size_t n, size, i;

	every_record(&f);
	out = malloc(f.size);
	size = shuffle(&f, out);
	assert_int_equal(size, f.size);
	if (read_back(out, size, ids, seqs, &n, &st, &err) != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(n, f.nrecs);
	for (i = 0; i < n; i++) {   /* exactly the order of the file written in seq order */
		assert_int_equal(ids[i], f.recs[i].id);
		assert_int_equal(seqs[i], f.recs[i].seq);
	}
	assert_int_equal(st.runs, 3);
	assert_int_equal(st.seq_gaps, 0);
	assert_int_equal(st.seq_duplicates, 0);
	free(out);
	free(f.data);
}

/* A run lost (a thread's buffer never written) and a run written twice: counted and
 * located, every other record still in order. */
static void test_missing_and_duplicated_runs_are_located(void **state)
{
	struct file f;
	uint8_t *out;
	uint32_t ids[64];
	uint64_t seqs[64];
	struct jf_zone_stats st = { 0 };
	struct jf_error err = { "" };
	size_t n, at = 40, region_load_at, second_clock_at;

	every_record(&f);
	out = malloc(2 * f.size);
	memcpy(out, f.data, 40);
	at = put(out, at, &f, 0, 3);              /* CLOCK(1) MARKER(2) INTERP_RANGE(3) */
	region_load_at = at + f.recs[5].size;
	at = put(out, at, &f, 5, 10);             /* CODE_LOAD 6 7 8 EVENT(9): 4, 5 lost */
	second_clock_at = at;
	at = put(out, at, &f, 0, 1);              /* CLOCK(1) again */
	at = put(out, at, &f, 10, 15);            /* 10 11 12 CODE_CLOSE */
	if (read_back(out, at, ids, seqs, &n, &st, &err) != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(n, f.nrecs - 2 + 1);
	assert_int_equal(st.seq_gaps, 1);
	assert_int_equal(st.seq_missing, 2);
	assert_int_equal(st.first_gap_after, 3);
	assert_int_equal(st.first_gap_offset, region_load_at);
	assert_int_equal(st.seq_duplicates, 1);
	assert_int_equal(st.first_duplicate_offset, second_clock_at);

	/* `jitflow zone dump` says so, and where */
	{
		char path[600], cmd[1400], want[200], *listing;

		snprintf(path, sizeof(path), "%s/lost-and-doubled.dump", jf_test_tmpdir());
		jf_test_write_file(path, out, at);
		snprintf(cmd, sizeof(cmd), "'%s' zone dump '%s'", jf_test_cli(), path);
		assert_int_equal(jf_test_run(cmd, &listing), 0);
		snprintf(want, sizeof(want), "seq duplicates 1 (first at offset %zu); seqs missing "
			 "2 in 1 gaps (first after seq 3, before offset %zu)\n", second_clock_at,
			 region_load_at);
		if (!strstr(listing, want))
			fail_msg("expected '%s' in:\n%s", want, listing);
		free(listing);
	}
	free(out);
	free(f.data);
}

/* The shuffled file cut at every length: the whole records before the cut come back (in
 * seq order), then an error naming the offset; never a crash or an overread (the
 * sanitizer pass runs this too). */
static void test_shuffled_file_truncated_at_every_length(void **state)
{
	struct file f;
	uint8_t *out;
	uint32_t ids[64];
	uint64_t seqs[64];
	size_t n, size, len, clean = 0, i;

	every_record(&f);
	out = malloc(f.size);
	size = shuffle(&f, out);
	for (len = 0; len < size; len++) {
		uint8_t *copy = malloc(len ? len : 1);
		struct jf_error err = { "" };
		int rc;

		memcpy(copy, out, len);
		rc = read_back(copy, len, ids, seqs, &n, NULL, &err);
		if (rc == 0)
			clean++;
		else if (!strstr(err.msg, "shuffled.dump: offset "))
			fail_msg("cut at %zu: unlocated error '%s'", len, err.msg);
		for (i = 1; i < n; i++) /* what came back is in seq order (perf's have 0) */
			assert_true(!seqs[i] || !seqs[i - 1] || seqs[i] > seqs[i - 1]);
		free(copy);
	}
	/* a cut right after the header or any record but the last leaves a valid file */
	assert_int_equal(clean, f.nrecs);
	free(out);
	free(f.data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threads_read_back_in_seq_order),
		cmocka_unit_test(test_shuffled_runs_read_in_seq_order),
		cmocka_unit_test(test_missing_and_duplicated_runs_are_located),
		cmocka_unit_test(test_shuffled_file_truncated_at_every_length),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
