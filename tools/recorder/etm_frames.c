#include "etm_frames.h"

#include <string.h>

/* Data bytes a frame holds after its ID byte (bytes 1 to 14). */
enum { FRAME_DATA = 14, AUX = 15 };

size_t jf_cs_frames_size(size_t n)
{
	return (n + FRAME_DATA - 1) / FRAME_DATA * JF_CS_FRAME_SIZE;
}

static void put_data(uint8_t *frame, int pos, uint8_t d)
{
	if (pos % 2) {
		frame[pos] = d;
		return;
	}
	frame[pos] = (uint8_t)(d & 0xfe);
	frame[AUX] |= (uint8_t)((d & 1) << (pos / 2));
}

/* after = 1: the new ID takes effect after the next data byte. */
static void put_id(uint8_t *frame, int pos, uint8_t id, int after)
{
	frame[pos] = (uint8_t)(id << 1 | 1);
	frame[AUX] |= (uint8_t)(after << (pos / 2));
}

void jf_cs_frames_write(const uint8_t *data, size_t n, uint8_t id, uint8_t *out)
{
	size_t done = 0;

	while (done < n) {
		uint8_t *frame = out;
		size_t m = n - done < FRAME_DATA ? n - done : FRAME_DATA;
		int pos;

		memset(frame, 0, JF_CS_FRAME_SIZE);
		put_id(frame, 0, id, 0);
		for (pos = 1; pos < (int)m; pos++)
			put_data(frame, pos, data[done + (size_t)pos - 1]);
		if (m == FRAME_DATA) {
			put_data(frame, (int)m, data[done + m - 1]);
		} else if (m % 2) {
			/* The last byte in an odd place: ID 0 in the even one after it. */
			put_data(frame, (int)m, data[done + m - 1]);
			put_id(frame, (int)m + 1, 0, 0);
		} else {
			/* An ID can only go in an even place: ID 0 there, taking effect after
			 * the last data byte, which moves to the odd place after it. */
			put_id(frame, (int)m, 0, 1);
			put_data(frame, (int)m + 1, data[done + m - 1]);
		}
		done += m;
		out += JF_CS_FRAME_SIZE;
	}
}
