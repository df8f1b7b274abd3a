/* jitflow record --executions N: N fresh process executions of one program, one recording
 * each, for warm-up across executions (jitflow warmup). */
#ifndef JITFLOW_RECORD_EXECUTIONS_H
#define JITFLOW_RECORD_EXECUTIONS_H

/* Runs `jitflow record OPTIONS -o DIR/exec-I -- PROGRAM...` for I = 1..n, one after the
 * other, each a new jitflow process (and so a new process of PROGRAM). options: the
 * record options other than -o and --executions. Returns 0 when every execution was
 * recorded and exited 0, else the first nonzero exit status (JF_EXIT_FAIL when a
 * recording could not start). */
int jf_record_executions(unsigned n, const char *dir, int noptions, char **options, int nprogram,
			 char **program);

#endif
