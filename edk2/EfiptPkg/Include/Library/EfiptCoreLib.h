/** @file
  EfiptCoreLib: efipt's freestanding core/ and arch/x86_64/ engine built
  under EDK2 (the same source files as efipt.efi), and struct cpu_ops over
  BaseLib's CPUID, RDMSR, WRMSR and RDTSC.

  Include EDK2 headers first, then this one: it brings in efipt's headers
  (arch/x86_64/boot_trace.h and what it needs).
**/
#ifndef EFIPT_CORE_LIB_H_
#define EFIPT_CORE_LIB_H_

#include "arch/x86_64/boot_trace.h"
#include "arch/x86_64/boot_trace_cpus.h"

/* This CPU through BaseLib (AsmCpuidEx, AsmReadMsr64, AsmWriteMsr64,
   AsmReadTsc). No #GP guard: every MSR access is validated against CPUID
   before it is made (core/pt_config.c, arch/x86_64/pt_engine.c). */
extern const struct cpu_ops  gEfiptCpuOps;

/* Trace buffers in reserved pages (the phase's MemoryAllocationLib),
   identity-mapped: PEI and DXE both. */
extern const struct ptout_mem  gEfiptReservedMem;

/* struct ptout_mem's write64, fill and read over identity-mapped memory. */
void
EfiptMemWrite64 (
  void      *Ctx,
  uint64_t  Phys,
  uint64_t  Value
  );

void
EfiptMemFill (
  void      *Ctx,
  uint64_t  Phys,
  int       Byte,
  uint64_t  Len
  );

void
EfiptMemRead (
  void      *Ctx,
  uint64_t  Phys,
  void      *Dst,
  size_t    Len
  );

#endif
