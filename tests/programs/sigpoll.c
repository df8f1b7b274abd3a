/* Recorder test program: a load from a page that cannot be read faults, and the SIGSEGV
 * handler resumes the thread elsewhere by setting the interrupted context's instruction
 * pointer, as a JVM's safepoint poll does. The faulting block ends with a conditional
 * branch and is reached by a direct jump from the block before it, so the direction of
 * that branch never shows and the recorder writes an overflow (OVF); a decoder then
 * skips every block since the last branch the trace told it about: here both blocks of
 * poll_run, which an indirect call entered.
 *
 * Output: polls=N (the faults the handler took, one per call on the unreadable page). */
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <ucontext.h>

enum { CALLS = 16 };

void poll_run(const long *page);
extern const char poll_resume[];

__asm__(".text\n"
	".globl poll_run\n"
	"poll_run:\n"
	"	mov $1, %eax\n"
	"	add %rdi, %rax\n"
	"	jmp 1f\n"
	"1:	mov (%rdi), %rdx\n" /* faults on the unreadable page */
	"	test %rdx, %rdx\n"
	"	jne 2f\n"
	"	nop\n"
	"2:	ret\n"
	".globl poll_resume\n"
	"poll_resume:\n"
	"	ret\n");

static volatile int polls;

static void on_segv(int sig, siginfo_t *si, void *context)
{
	ucontext_t *uc = context;

	(void)sig;
	(void)si;
	polls++;
	uc->uc_mcontext.gregs[REG_RIP] = (greg_t)poll_resume;
}

int main(void)
{
	static long readable;
	void (*volatile run)(const long *) = poll_run;
	struct sigaction sa = { 0 };
	long *poll_page;
	int i;

	poll_page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (poll_page == MAP_FAILED)
		return 1;
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	for (i = 0; i < CALLS; i++) {
		run(&readable);
		run(poll_page);
	}
	printf("polls=%d\n", polls);
	return polls == CALLS ? 0 : 1;
}
