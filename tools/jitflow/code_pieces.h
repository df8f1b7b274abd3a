/* A recording's saved code: the executed pages of its mapped files (DIR/code/). */
#ifndef JITFLOW_CODE_PIECES_H
#define JITFLOW_CODE_PIECES_H

#include "cli_inputs.h"

/* Decode the recording in dir and save the pages it executed in each mapped file as
 * dir/code/NAME@ADDRESS.bin (hexadecimal address), with the bytes of no instruction that
 * ran set to zero. */
int jf_save_code_pieces(const char *dir, struct jf_error *err);

/* Load dir/code/ pieces into in's code map; files they name are then not read from their
 * recorded paths. A recording without pieces is fine (nothing happens). */
int jf_load_code_pieces(struct jf_cli_inputs *in, const char *dir, struct jf_error *err);

#endif
