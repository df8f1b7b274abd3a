/* libFuzzer target for the recorder's read of a runtime's zone file as its writes complete
 * (record_zone_code.c): a hostile file (sizes below a record's prefix or beyond the file,
 * a header that lies about its size, records too short for their fields) must never crash,
 * read out of bounds or loop; and the code ranges it reports must be the same whether the
 * file arrives in one write or in many (every whole record read once, none before it is
 * whole). The input is the file; its writes end at steps its own bytes choose. */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../../decoder/fuzz/fuzz_input_file.h"
#include "record_internal.h"
#include "record_zone_code.h"

/* What was reported: how many ranges and a digest of them in order. */
static uint64_t reports, digest;

void jf_rec_code_described(struct jf_record_state *st, uint64_t addr, uint64_t size)
{
	(void)st;
	reports++;
	digest = (digest ^ addr) * 0x100000001b3ull;
	digest = (digest ^ size) * 0x100000001b3ull;
}

/* Read the file at path, written in writes that end at each step: the digest. */
static uint64_t read_in_writes(char *path, const uint8_t *data, size_t size, int whole)
{
	struct jf_rec_code_changes *any = (struct jf_rec_code_changes *)&reports;
	struct jf_record_state *st = calloc(1, sizeof(*st));
	struct jf_zone_writes zw = { .path = path };
	size_t i = 0;

	if (!st)
		abort();
	st->code_changes = any; /* only tested for NULL there */
	reports = 0;
	digest = 0xcbf29ce484222325ull;
	while (zw.size < size) {
		/* A step of 1 to 256 bytes, from the file's own bytes. */
		zw.size = whole ? size : zw.size + 1 + data[i++ % size];
		if (zw.size > size)
			zw.size = size;
		jf_rec_zone_code_written(st, &zw);
	}
	free(st);
	return digest ^ reports;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	uint64_t whole, stepped;
	int fd;

	if (!size)
		return 0;
	fd = fuzz_input_file(data, size, path, sizeof(path));
	if (fd < 0)
		return 0;
	whole = read_in_writes(path, data, size, 1);
	stepped = read_in_writes(path, data, size, 0);
	close(fd);
	if (whole != stepped)
		abort();
	return 0;
}
