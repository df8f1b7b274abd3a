/* The jitflow subcommands. Each lives in its own cmd_*.c file and is listed in main.c. */
#ifndef JITFLOW_COMMANDS_H
#define JITFLOW_COMMANDS_H

struct jf_command {
	const char *name;
	const char *summary;  /* one line, for `jitflow --help` */
	int (*run)(int argc, char **argv); /* argv[0] is the subcommand's name */
};

/* Exit codes: 0 success, 1 failure (one-line reason on stderr), 2 bad usage. */
enum { JF_EXIT_OK = 0, JF_EXIT_FAIL = 1, JF_EXIT_USAGE = 2 };

int jf_cmd_decode(int argc, char **argv);
int jf_cmd_stat(int argc, char **argv);
int jf_cmd_report(int argc, char **argv);
int jf_cmd_guards(int argc, char **argv);
int jf_cmd_split(int argc, char **argv);
int jf_cmd_bytecodes(int argc, char **argv);
int jf_cmd_timeline(int argc, char **argv);
int jf_cmd_stacks(int argc, char **argv);
int jf_cmd_check(int argc, char **argv);
int jf_cmd_zone(int argc, char **argv);
int jf_cmd_record(int argc, char **argv);
int jf_cmd_warmup(int argc, char **argv);
int jf_cmd_merge(int argc, char **argv);

#endif
