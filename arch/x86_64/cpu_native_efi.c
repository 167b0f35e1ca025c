/*
 * The running CPU behind struct cpu_ops (firmware build).
 *
 * RDMSR and WRMSR run from small assembly stubs whose faulting instruction
 * and recovery point have known addresses: when efi/gp_guard.c has a #GP
 * handler installed, a fault on exactly those instructions resumes at the
 * recovery point, and the access returns CPU_FAULT_GP instead of hanging the
 * machine. This is a second line of defence: callers still validate every
 * MSR access against CPUID first (SDM 33.2.8: RTIT MSRs #GP when absent).
 */
#include "arch/x86_64/cpu_ops.h"
#include "arch/x86_64/cpu_fault.h"

/* System V calling convention (gnu-efi builds our own code that way). */
int cpu_rdmsr_stub(uint32_t msr, uint64_t *value);
int cpu_wrmsr_stub(uint32_t msr, uint64_t value);
int cpu_probe_stub(const volatile uint8_t *addr);
extern const char cpu_rdmsr_at[], cpu_rdmsr_fixup[];
extern const char cpu_wrmsr_at[], cpu_wrmsr_fixup[];
extern const char cpu_probe_at[], cpu_probe_fixup[];

__asm__(".text\n"
	".globl cpu_rdmsr_stub\n"
	"cpu_rdmsr_stub:\n"
	"	movl %edi, %ecx\n"
	"cpu_rdmsr_at:\n"
	"	rdmsr\n"
	"	shlq $32, %rdx\n"
	"	orq %rdx, %rax\n"
	"	movq %rax, (%rsi)\n"
	"	xorl %eax, %eax\n"
	"	ret\n"
	"cpu_rdmsr_fixup:\n"
	"	movl $-13, %eax\n"
	"	ret\n"
	".globl cpu_wrmsr_stub\n"
	"cpu_wrmsr_stub:\n"
	"	movl %edi, %ecx\n"
	"	movl %esi, %eax\n"
	"	movq %rsi, %rdx\n"
	"	shrq $32, %rdx\n"
	"cpu_wrmsr_at:\n"
	"	wrmsr\n"
	"	xorl %eax, %eax\n"
	"	ret\n"
	"cpu_wrmsr_fixup:\n"
	"	movl $-13, %eax\n"
	"	ret\n"
	/* a load that may #GP (non-canonical address): tests the guard itself */
	".globl cpu_probe_stub\n"
	"cpu_probe_stub:\n"
	"cpu_probe_at:\n"
	"	movb (%rdi), %al\n"
	"	xorl %eax, %eax\n"
	"	ret\n"
	"cpu_probe_fixup:\n"
	"	movl $-13, %eax\n"
	"	ret\n"
	".globl cpu_rdmsr_at, cpu_rdmsr_fixup, cpu_wrmsr_at, cpu_wrmsr_fixup\n"
	".globl cpu_probe_at, cpu_probe_fixup\n");

bool cpu_fault_fixup(uint64_t *rip)
{
	static const struct {
		const char *at, *fixup;
	} table[] = {
		{ cpu_rdmsr_at, cpu_rdmsr_fixup },
		{ cpu_wrmsr_at, cpu_wrmsr_fixup },
		{ cpu_probe_at, cpu_probe_fixup },
	};
	for (unsigned i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (*rip == (uint64_t)(uintptr_t)table[i].at) {
			*rip = (uint64_t)(uintptr_t)table[i].fixup;
			return true;
		}
	}
	return false;
}

int cpu_probe_read(uint64_t addr)
{
	return cpu_probe_stub((const volatile uint8_t *)(uintptr_t)addr);
}

static void native_cpuid(void *ctx, uint32_t leaf, uint32_t subleaf, uint32_t r[4])
{
	(void)ctx;
	__asm__ volatile("cpuid"
			 : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3])
			 : "a"(leaf), "c"(subleaf));
}

static int native_rdmsr(void *ctx, uint32_t msr, uint64_t *value)
{
	(void)ctx;
	*value = 0;
	return cpu_rdmsr_stub(msr, value);
}

static int native_wrmsr(void *ctx, uint32_t msr, uint64_t value)
{
	(void)ctx;
	return cpu_wrmsr_stub(msr, value);
}

static uint64_t native_rdtsc(void *ctx)
{
	(void)ctx;
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

const struct cpu_ops cpu_native_ops = {
	.cpuid = native_cpuid,
	.rdmsr = native_rdmsr,
	.wrmsr = native_wrmsr,
	.rdtsc = native_rdtsc,
	.ctx = 0,
};
