/* libipt_block_stat: the work of `ptxed --block-decoder --quiet --stat`, for benchmarks on
 * machines without ptxed.
 *
 *   libipt_block_stat --raw FILE[:FROM[-TO]]:BASE ... --pt TRACE
 *
 * ptxed, libipt's reference decoder, needs Intel XED, which Debian does not ship, and
 * Debian's libipt packages do not include it. With --quiet --stat ptxed never calls XED:
 * it only drives libipt's block decoder (sync forward, drain events, pt_blk_next, count
 * blocks and instructions, resynchronise after an error) and prints the counts. This
 * program does that same loop over the same libipt calls, so its time is what ptxed's
 * would be with the installed libipt. It prints "insn: N" and "blocks: N" as ptxed does,
 * plus the errors it resynchronised after. */
#include <inttypes.h>
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(void)
{
	fprintf(stderr, "usage: libipt_block_stat --raw FILE[:FROM[-TO]]:BASE ... --pt TRACE\n");
	return 2;
}

static uint8_t *read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) < 0) {
		fclose(f);
		return NULL;
	}
	buf = malloc((size_t)n);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*size = (size_t)n;
	return buf;
}

/* FILE[:FROM[-TO]]:BASE, ptxed's --raw syntax; added through an image section cache, as
 * ptxed adds it. */
static int add_raw(struct pt_image *image, struct pt_image_section_cache *iscache, char *arg)
{
	char *base_s = strrchr(arg, ':'), *range, *end;
	uint64_t base, from = 0, to = 0;
	int rc;

	if (!base_s)
		return -1;
	*base_s++ = 0;
	base = strtoull(base_s, &end, 0);
	if (*end)
		return -1;
	range = strrchr(arg, ':');
	if (range) {
		*range++ = 0;
		from = strtoull(range, &end, 0);
		if (*end == '-')
			to = strtoull(end + 1, &end, 0);
		if (*end)
			return -1;
	}
	if (!to) {
		FILE *f = fopen(arg, "rb");

		if (!f || fseek(f, 0, SEEK_END) < 0 || ftell(f) <= (long)from) {
			if (f)
				fclose(f);
			fprintf(stderr, "libipt_block_stat: cannot read %s\n", arg);
			return -1;
		}
		to = (uint64_t)ftell(f);
		fclose(f);
	}
	rc = pt_iscache_add_file(iscache, arg, from, to - from, base);
	if (rc >= 0)
		rc = pt_image_add_cached(image, iscache, rc, NULL);
	if (rc < 0)
		fprintf(stderr, "libipt_block_stat: %s: %s\n", arg, pt_errstr(pt_errcode(rc)));
	return rc;
}

int main(int argc, char **argv)
{
	struct pt_image_section_cache *iscache = pt_iscache_alloc("bench");
	struct pt_image *image = pt_image_alloc("bench");
	struct pt_block_decoder *dec;
	struct pt_config config;
	uint64_t insns = 0, blocks = 0, errors = 0, last_sync = 0;
	uint8_t *trace = NULL;
	size_t size = 0;
	int i, status;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--raw") && i + 1 < argc) {
			if (add_raw(image, iscache, argv[++i]) < 0)
				return usage();
		} else if (!strcmp(argv[i], "--pt") && i + 1 < argc) {
			trace = read_file(argv[++i], &size);
			if (!trace) {
				fprintf(stderr, "libipt_block_stat: cannot read %s\n", argv[i]);
				return 1;
			}
		} else {
			return usage();
		}
	}
	if (!trace)
		return usage();
	pt_config_init(&config);
	config.begin = trace;
	config.end = trace + size;
	dec = pt_blk_alloc_decoder(&config);
	if (!dec)
		return 1;
	pt_blk_set_image(dec, image);
	for (;;) {
		struct pt_block block;

		status = pt_blk_sync_forward(dec);
		if (status < 0) {
			uint64_t offset = 0;

			if (status == -pte_eos)
				break;
			/* No progress since the last failed sync: stop, as ptxed does. */
			errors++;
			if (pt_blk_get_offset(dec, &offset) < 0 || offset <= last_sync)
				break;
			last_sync = offset;
			continue;
		}
		memset(&block, 0, sizeof(block));
		for (;;) {
			while (status & pts_event_pending) {
				struct pt_event event;

				status = pt_blk_event(dec, &event, sizeof(event));
				if (status < 0)
					break;
			}
			if (status < 0 || (status & pts_eos))
				break;
			status = pt_blk_next(dec, &block, sizeof(block));
			/* A failing call may still have decoded instructions. */
			insns += block.ninsn;
			if (status < 0) {
				if (block.ninsn)
					blocks++;
				break;
			}
			blocks++;
		}
		if (status < 0) {
			if (status == -pte_eos)
				break;
			errors++;
		} else {
			break;
		}
	}
	printf("insn: %" PRIu64 ".\nblocks: %" PRIu64 ".\nerrors: %" PRIu64 ".\n", insns, blocks,
	       errors);
	pt_blk_free_decoder(dec);
	pt_image_free(image);
	pt_iscache_free(iscache);
	free(trace);
	return 0;
}
