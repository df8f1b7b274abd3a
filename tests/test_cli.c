/* The jitflow command as users run it: --help everywhere, exit codes, one-line errors that
 * name the file, and JSON output that parses. */
#include <cjson/cJSON.h>

#include "test_support.h"
#include "pt_builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Run `jitflow ARGS`; returns the exit status, stdout in *out (may be NULL), and the
 * number of stderr lines in *nerr, its text in errtext. */
static char errtext[4096];

static int cli(const char *args, char **out, int *nerr)
{
	char cmd[4096], errpath[512];
	FILE *f;
	size_t n;
	int rc, i;

	snprintf(errpath, sizeof(errpath), "%s/stderr.txt", jf_test_tmpdir());
	snprintf(cmd, sizeof(cmd), "\"%s\" %s 2>\"%s\"", jf_test_cli(), args, errpath);
	rc = jf_test_run(cmd, out);
	f = fopen(errpath, "r");
	assert_non_null(f);
	n = fread(errtext, 1, sizeof(errtext) - 1, f);
	errtext[n] = 0;
	fclose(f);
	*nerr = 0;
	for (i = 0; errtext[i]; i++)
		*nerr += errtext[i] == '\n';
	if (n && errtext[n - 1] != '\n')
		(*nerr)++;
	return rc;
}

/* Fails unless the command exits with want (or any non-zero status for want < 0) and says
 * why in exactly one line of stderr containing each of the words. */
static void expect_failure(const char *args, int want, const char *word1, const char *word2)
{
	int rc, nerr;

	rc = cli(args, NULL, &nerr);
	if ((want >= 0 && rc != want) || (want < 0 && rc == 0) || rc < 0)
		fail_msg("jitflow %s: exit %d, expected %d; stderr: %s", args, rc, want, errtext);
	if (nerr != 1)
		fail_msg("jitflow %s: %d lines on stderr, expected one: %s", args, nerr, errtext);
	if ((word1 && !strstr(errtext, word1)) || (word2 && !strstr(errtext, word2)))
		fail_msg("jitflow %s: stderr does not name '%s' / '%s': %s", args,
			 word1 ? word1 : "", word2 ? word2 : "", errtext);
}

static void test_help_everywhere(void **state)
{
	char *out = NULL, *line, *save = NULL, args[128];
	int nerr, ncommands = 0, in_list = 0;

	assert_int_equal(cli("--help", &out, &nerr), 0);
	assert_non_null(strstr(out, "usage: jitflow"));
	/* Every command listed has its own --help. */
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[64], *sub = NULL;

		if (!strncmp(line, "commands:", 9)) {
			in_list = 1;
			continue;
		}
		if (!in_list || strncmp(line, "  ", 2) || sscanf(line, "%63s", name) != 1)
			continue;
		snprintf(args, sizeof(args), "%s --help", name);
		if (cli(args, &sub, &nerr) != 0)
			fail_msg("jitflow %s exits non-zero: %s", args, errtext);
		snprintf(args, sizeof(args), "usage: jitflow %s", name);
		if (!strstr(sub, args))
			fail_msg("jitflow %s --help prints no usage line", name);
		free(sub);
		ncommands++;
	}
	assert_true(ncommands >= 2);   /* decode and stat at least */
	free(out);
}

static void test_bad_usage(void **state)
{
	int nerr;

	assert_int_equal(cli("", NULL, &nerr), 2);
	expect_failure("no-such-command", 2, "no-such-command", NULL);
	expect_failure("decode --no-such-option", 2, "--no-such-option", NULL);
	expect_failure("stat --no-such-option", 2, "--no-such-option", NULL);
	expect_failure("decode --pt", 2, "--pt", NULL);
	expect_failure("stat --cpu 6/x --pt t.pt", 2, "--cpu", "6/x");
	expect_failure("decode --mtc-freq 256 --pt t.pt", 2, "--mtc-freq", "256");
	expect_failure("decode", 1, "--pt", NULL);
}

static void test_bad_trace_files(void **state)
{
	const char *dir = jf_test_tmpdir();
	char path[512], args[1024];

	snprintf(args, sizeof(args), "decode --pt %s/does-not-exist.pt", dir);
	expect_failure(args, 1, "does-not-exist.pt", NULL);
	snprintf(args, sizeof(args), "stat --pt %s/does-not-exist.pt", dir);
	expect_failure(args, 1, "does-not-exist.pt", NULL);

	snprintf(path, sizeof(path), "%s/empty.pt", dir);
	jf_test_write_file(path, "", 0);
	snprintf(args, sizeof(args), "decode --pt %s", path);
	expect_failure(args, 1, "empty.pt", "empty");
	snprintf(args, sizeof(args), "stat --pt %s", path);
	expect_failure(args, 1, "empty.pt", "empty");

	snprintf(path, sizeof(path), "%s/unreadable.pt", dir);
	jf_test_write_file(path, "\x02\x82", 2);
	assert_int_equal(chmod(path, 0), 0);
	if (access(path, R_OK) == 0) {
		/* root reads everything: nothing to test */
		printf("note: running as root, unreadable-file case not testable\n");
	} else {
		snprintf(args, sizeof(args), "decode --pt %s", path);
		expect_failure(args, 1, "unreadable.pt", NULL);
	}
	/* A directory cannot be read as a trace, even by root. */
	snprintf(args, sizeof(args), "decode --pt %s", dir);
	expect_failure(args, 1, dir, NULL);
}

static void test_bad_images(void **state)
{
	const char *dir = jf_test_tmpdir();
	char trace[512], image[512], args[1536];

	snprintf(trace, sizeof(trace), "%s/t.pt", dir);
	jf_test_write_file(trace, "\x02\x82\x02\x82", 4);
	snprintf(image, sizeof(image), "%s/image.bin", dir);
	jf_test_write_file(image, "\x90\x90\x90\x90\x90\x90\x90\x90", 8);

	/* no BASE */
	snprintf(args, sizeof(args), "decode --pt %s --raw %s", trace, image);
	expect_failure(args, -1, "image.bin", "BASE");
	/* a range past the end of the 8-byte file: the file and the range are named */
	snprintf(args, sizeof(args), "decode --pt %s --raw %s:4-0x1000:0x400000", trace, image);
	expect_failure(args, -1, "image.bin", "0x1000");
	/* a missing image */
	snprintf(args, sizeof(args), "decode --pt %s --raw %s/nothing.bin:0x400000", trace, dir);
	expect_failure(args, -1, "nothing.bin", NULL);
	/* not an ELF file: named, with the offset where the magic was expected */
	snprintf(args, sizeof(args), "decode --pt %s --elf %s", trace, image);
	expect_failure(args, -1, "image.bin", "offset 0");
	snprintf(args, sizeof(args), "stat --pt %s --elf %s:0x400000", trace, image);
	expect_failure(args, -1, "image.bin", "ELF");
}

/* ---- a real decode --------------------------------------------------------------------- */

static const uint8_t loop[] = {
	/* 0x400000 */ 0xb9, 0x02, 0x00, 0x00, 0x00, /* mov ecx, 2 */
	/* 0x400005 */ 0xff, 0xc9,                   /* loop: dec ecx */
	/* 0x400007 */ 0x75, 0xfc,                   /* jnz loop */
	/* 0x400009 */ 0x0f, 0x05,                   /* syscall (exit) */
};

/* Writes the program and one run's trace (taken once, then not taken); returns the
 * decode arguments. */
static const char *loop_inputs(void)
{
	static char args[1200];
	char trace[512], image[512];
	struct jf_ptb *b = jf_ptb_new();

	jf_ptb_psb(b);
	jf_ptb_psbend(b);
	jf_ptb_mode_exec(b, ptem_64bit);
	jf_ptb_tip_pge(b, pt_ipc_sext_48, 0x400000);
	jf_ptb_tnt(b, "TN");
	jf_ptb_tip_pgd(b, pt_ipc_suppressed, 0);
	snprintf(trace, sizeof(trace), "%s/loop.pt", jf_test_tmpdir());
	jf_test_write_file(trace, jf_ptb_bytes(b), jf_ptb_size(b));
	jf_ptb_free(b);
	snprintf(image, sizeof(image), "%s/loop.bin", jf_test_tmpdir());
	jf_test_write_file(image, loop, sizeof(loop));
	snprintf(args, sizeof(args), "--pt %s --raw %s:0x400000", trace, image);
	return args;
}

static void test_decode_text(void **state)
{
	char args[1400], *out = NULL;
	int nerr;

	snprintf(args, sizeof(args), "decode %s", loop_inputs());
	assert_int_equal(cli(args, &out, &nerr), 0);
	assert_int_equal(nerr, 0);
	/* mov, dec, jnz (taken), dec, jnz (not taken), syscall */
	assert_string_equal(out, "[enabled]\n"
				 "[exec mode: 64-bit]\n"
				 "0000000000400000\n"
				 "0000000000400005\n"
				 "0000000000400007\n"
				 "0000000000400005\n"
				 "0000000000400007\n"
				 "0000000000400009\n"
				 "[disabled]\n");
	free(out);
}

/* Each line a JSON object with a "kind" first; returns the number of lines of that kind. */
static int check_jsonl(const char *out, const char *count_kind)
{
	char key[64];
	const char *p = out;
	int n = 0;

	/* Every line parses as a JSON object (cJSON, an independent parser) with a kind. */
	while (*p) {
		const char *nl = strchr(p, '\n');
		cJSON *o = nl ? cJSON_ParseWithLength(p, (size_t)(nl - p)) : NULL;

		if (!cJSON_IsObject(o) || !cJSON_IsString(cJSON_GetObjectItem(o, "kind")))
			fail_msg("not JSON lines with a kind:\n%s", out);
		cJSON_Delete(o);
		p = nl + 1;
	}
	p = out;
	snprintf(key, sizeof(key), "{\"kind\":\"%s\"", count_kind);
	while (*p) {
		const char *nl = strchr(p, '\n');

		if (!nl || p[0] != '{' || nl[-1] != '}' || strncmp(p, "{\"kind\":\"", 9))
			fail_msg("not a JSON object with a kind first: %.*s", (int)(nl ? nl - p : 80), p);
		n += !strncmp(p, key, strlen(key));
		p = nl + 1;
	}
	return n;
}

static void test_decode_jsonl(void **state)
{
	char args[1400], *out = NULL;
	int nerr;

	snprintf(args, sizeof(args), "decode %s --format=jsonl", loop_inputs());
	assert_int_equal(cli(args, &out, &nerr), 0);
	assert_int_equal(check_jsonl(out, "insn"), 6);
	assert_int_equal(check_jsonl(out, "event"), 3);  /* enabled, exec mode, disabled */
	assert_non_null(strstr(out, "{\"kind\":\"insn\",\"ip\":\"0x400009\"}"));
	free(out);
	snprintf(args, sizeof(args), "decode %s --blocks --format=jsonl", loop_inputs());
	assert_int_equal(cli(args, &out, &nerr), 0);
	assert_int_equal(check_jsonl(out, "block"), 3);  /* mov..jnz, dec..jnz, syscall */
	free(out);
}

static void test_stat_json(void **state)
{
	char args[1400], *out = NULL;
	int nerr;

	snprintf(args, sizeof(args), "stat %s --json", loop_inputs());
	assert_int_equal(cli(args, &out, &nerr), 0);
	assert_non_null(strstr(out, "\"instructions\":6,"));
	assert_non_null(strstr(out, "\"blocks\":3,"));
	assert_non_null(strstr(out, "\"errors\":0,"));
	{
		cJSON *doc = cJSON_Parse(out);

		assert_true(cJSON_IsObject(doc));
		cJSON_Delete(doc);
	}
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_help_everywhere),
		cmocka_unit_test(test_bad_usage),
		cmocka_unit_test(test_bad_trace_files),
		cmocka_unit_test(test_bad_images),
		cmocka_unit_test(test_decode_text),
		cmocka_unit_test(test_decode_jsonl),
		cmocka_unit_test(test_stat_json),
	};
	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
