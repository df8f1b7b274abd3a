/* What the emitter asks of the machine: clocks, thread ids, the ELF machine number for the
 * jitdump header, and whether PTWRITE exists. Kept apart so the record code stays
 * portable. */
#include <stdint.h>
#include <sys/auxv.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

#include "emitter_internal.h"

JF_EMIT_CODE
uint64_t jf_emit_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Counter frequency if the architecture states it (AArch64 does; x86 does not portably:
 * 0 there, and a reader derives it from the two CLOCK records at open and close). */
JF_EMIT_CODE
uint64_t jf_emit_tick_hz(void)
{
#if defined(__aarch64__)
	uint64_t v;

	__asm__ volatile("mrs %0, cntfrq_el0" : "=r"(v));
	return v;
#else
	return 0;
#endif
}

/* clock_gettime(CLOCK_MONOTONIC) is a call into the vDSO where the kernel maps one; without
 * it (QEMU user mode, some sandboxes) every call is a system call. Where the architecture
 * has a counter the emitter then timestamps with it instead. */
JF_EMIT_CODE
int jf_emit_monotonic_is_cheap(void)
{
#if defined(__x86_64__) || defined(__i386__) || defined(__aarch64__)
	return getauxval(AT_SYSINFO_EHDR) != 0;
#else
	return 1; /* no counter to fall back on */
#endif
}

JF_EMIT_CODE
uint32_t jf_emit_tid(void)
{
	static __thread uint32_t tid;

	if (!tid)
		tid = (uint32_t)syscall(SYS_gettid);
	return tid;
}

/* CPUID.(EAX=14H,ECX=0):EBX[4] says PTWRITE exists. */
JF_EMIT_CODE
int jf_emit_cpu_has_ptwrite(void)
{
#if defined(__x86_64__)
	unsigned a, b, c, d;

	if (__get_cpuid_max(0, 0) < 0x14)
		return 0;
	__cpuid_count(0x14, 0, a, b, c, d);
	(void)a; (void)c; (void)d;
	return (b >> 4) & 1;
#else
	return 0;
#endif
}

/* PTWRITE r64 (F3 REX.W 0F AE /4 with rax), as bytes so that assemblers without the
 * mnemonic still build it. Only called after jf_emit_cpu_has_ptwrite() said yes. */
JF_EMIT_CODE
void jf_emit_ptwrite(uint64_t value)
{
#if defined(__x86_64__)
	__asm__ volatile(".byte 0xf3, 0x48, 0x0f, 0xae, 0xe0" : : "a"(value) : "memory");
#else
	(void)value;
#endif
}

JF_EMIT_CODE
uint32_t jf_emit_elf_machine(void)
{
#if defined(__x86_64__)
	return 62;  /* EM_X86_64 */
#elif defined(__i386__)
	return 3;   /* EM_386 */
#elif defined(__aarch64__)
	return 183; /* EM_AARCH64 */
#elif defined(__arm__)
	return 40;  /* EM_ARM */
#else
	return 0;
#endif
}

JF_EMIT_CODE
void jf_emit_yield(void)
{
	sched_yield();
}
