/*
 * The running CPU behind struct cpu_ops (firmware build). RDMSR/WRMSR here
 * fault like the hardware does: callers validate against CPUID first.
 */
#include "arch/x86_64/cpu_ops.h"

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
	uint32_t lo, hi;
	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	*value = ((uint64_t)hi << 32) | lo;
	return 0;
}

static int native_wrmsr(void *ctx, uint32_t msr, uint64_t value)
{
	(void)ctx;
	__asm__ volatile("wrmsr" ::"c"(msr), "a"((uint32_t)value), "d"((uint32_t)(value >> 32))
			 : "memory");
	return 0;
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
