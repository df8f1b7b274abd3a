/* The code a runtime's zone file describes, read as each write() to it completes, so that
 * the observed patches (record_code_changes.h) that follow a record know it came: a
 * decoder applies the record at that write's time, over the bytes threads had run. */
#ifndef JITFLOW_RECORDER_RECORD_ZONE_CODE_H
#define JITFLOW_RECORDER_RECORD_ZONE_CODE_H

struct jf_record_state;
struct jf_zone_writes;

/* zw's file has grown to zw->size: each record completed since the last call that puts
 * code somewhere (CODE_LOAD, CODE_MOVE, REGION_MOVE, a runtime's PATCH) goes to
 * jf_rec_code_described. A file that cannot be read, or is no jitdump, is left alone. */
void jf_rec_zone_code_written(struct jf_record_state *st, struct jf_zone_writes *zw);

#endif
