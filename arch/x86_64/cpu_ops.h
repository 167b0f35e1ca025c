/*
 * Every CPU access efipt makes goes through this table, so the code that
 * programs Intel PT runs unchanged against the real CPU (firmware) and
 * against the PT model in tests/ (host).
 *
 * rdmsr/wrmsr return 0 on success or CPU_FAULT_GP when the access would
 * raise #GP. The native implementation cannot observe #GP after the fact:
 * callers must validate every MSR access against CPUID *before* making it.
 */
#ifndef EFIPT_ARCH_CPU_OPS_H
#define EFIPT_ARCH_CPU_OPS_H

#include <stdint.h>

#define CPU_FAULT_GP (-13)

struct cpu_ops {
	void (*cpuid)(void *ctx, uint32_t leaf, uint32_t subleaf, uint32_t r[4]);
	int (*rdmsr)(void *ctx, uint32_t msr, uint64_t *value);
	int (*wrmsr)(void *ctx, uint32_t msr, uint64_t value);
	uint64_t (*rdtsc)(void *ctx);
	void *ctx;
};

/* The running CPU (firmware build only: arch/x86_64/cpu_native_efi.c). */
extern const struct cpu_ops cpu_native_ops;

#endif
