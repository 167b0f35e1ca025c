/*
 * Recovery from #GP on efipt's own MSR accesses (firmware build). The
 * exception handler (efi/gp_guard.c) asks cpu_fault_fixup whether the
 * faulting RIP is one of the guarded instructions and, if so, where to resume.
 */
#ifndef EFIPT_ARCH_CPU_FAULT_H
#define EFIPT_ARCH_CPU_FAULT_H

#include <stdbool.h>
#include <stdint.h>

/* If *rip is a guarded instruction, move it to its recovery point. */
bool cpu_fault_fixup(uint64_t *rip);

/* Read one byte at addr through a guarded load: 0, or CPU_FAULT_GP. */
int cpu_probe_read(uint64_t addr);

#endif
