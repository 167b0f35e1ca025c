/** @file
  struct cpu_ops over BaseLib, for efipt's engine in EDK2 firmware.
**/
#include <Base.h>
#include <Library/BaseLib.h>
#include <Library/EfiptCoreLib.h>

static void
BaseLibCpuid (
  void      *Ctx,
  uint32_t  Leaf,
  uint32_t  Subleaf,
  uint32_t  R[4]
  )
{
  (void)Ctx;
  AsmCpuidEx (Leaf, Subleaf, &R[0], &R[1], &R[2], &R[3]);
}

/* RDMSR and WRMSR have no #GP guard here: efipt validates every access
   against CPUID before making it (SDM 33.2.8: the RTIT MSRs exist only
   where CPUID enumerates them). */
static int
BaseLibRdmsr (
  void      *Ctx,
  uint32_t  Msr,
  uint64_t  *Value
  )
{
  (void)Ctx;
  *Value = AsmReadMsr64 (Msr);
  return 0;
}

static int
BaseLibWrmsr (
  void      *Ctx,
  uint32_t  Msr,
  uint64_t  Value
  )
{
  (void)Ctx;
  AsmWriteMsr64 (Msr, Value);
  return 0;
}

static uint64_t
BaseLibRdtsc (
  void  *Ctx
  )
{
  (void)Ctx;
  return AsmReadTsc ();
}

const struct cpu_ops  gEfiptCpuOps = {
  .cpuid = BaseLibCpuid,
  .rdmsr = BaseLibRdmsr,
  .wrmsr = BaseLibWrmsr,
  .rdtsc = BaseLibRdtsc,
  .ctx   = 0,
};
