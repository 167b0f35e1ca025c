/** @file
  EfiptDxe on the application processors (--cpus; docs/edk2.md "Several
  CPUs"). Nobody efipt can reach runs the APs in PEI, and EfiptPei starts
  the boot processor only; once EFI_MP_SERVICES_PROTOCOL is installed (a
  protocol notification), each selected AP gets a buffer of its own and PT
  is started on it through StartupThisAP, validated against its own CPUID
  by the engine efipt.efi trace --cpus uses (arch/x86_64/boot_trace_cpus.c,
  pt_cpus.c). A CPU that cannot trace is recorded with the reason and the
  boot goes on. The APs stop at the stop point, at ReadyToBoot at the
  latest (MP services is not to be relied on once ExitBootServices began).
**/
#include "EfiptDxe.h"
#include <Library/BaseMemoryLib.h>
#include <Library/DebugLib.h>
#include <Library/MemoryAllocationLib.h>
#include <Library/UefiBootServicesTableLib.h>
#include <Library/UefiLib.h>
#include <Protocol/MpService.h>

/* How long an AP may take to run one of efipt's procedures. */
#define AP_TIMEOUT_US  2000000

STATIC EFI_MP_SERVICES_PROTOCOL  *mMp;
STATIC struct boottrace_aps      *mAps;
STATIC struct boottrace_mp       mMpView;
STATIC EFI_EVENT                 mMpEvent;
STATIC VOID                      *mMpRegistration;

STATIC
int
MpInfo (
  void      *Ctx,
  unsigned  Number,
  uint32_t  *ApicId,
  uint32_t  *Package,
  uint32_t  *Core,
  int       *Usable
  )
{
  EFI_PROCESSOR_INFORMATION  Info;

  (void)Ctx;
  ZeroMem (&Info, sizeof (Info));
  if (EFI_ERROR (mMp->GetProcessorInfo (mMp, Number, &Info))) {
    return -1;
  }

  *ApicId  = (uint32_t)Info.ProcessorId;
  *Package = Info.Location.Package;
  *Core    = Info.Location.Core;
  *Usable  = (Info.StatusFlag & (PROCESSOR_ENABLED_BIT | PROCESSOR_HEALTH_STATUS_BIT)) ==
             (PROCESSOR_ENABLED_BIT | PROCESSOR_HEALTH_STATUS_BIT);
  return 0;
}

/* efipt's procedures are not EFIAPI: the AP calls them through this. */
struct ap_call {
  void    (*Fn)(void *Arg);
  void    *Arg;
};

STATIC
VOID
EFIAPI
ApTrampoline (
  IN VOID  *Buffer
  )
{
  struct ap_call  *Call;

  Call = Buffer;
  Call->Fn (Call->Arg);
}

STATIC
int
MpOnCpu (
  void      *Ctx,
  unsigned  Number,
  void (*Fn)(void *Arg),
  void      *Arg
  )
{
  struct ap_call  Call;

  (void)Ctx;
  if (Number == mMpView.self) {
    Fn (Arg);
    return 0;
  }

  Call.Fn  = Fn;
  Call.Arg = Arg;
  return EFI_ERROR (mMp->StartupThisAP (mMp, ApTrampoline, Number, NULL, AP_TIMEOUT_US, &Call, NULL)) ? -1 : 0;
}

/* Every CPU runs the same instructions on itself. */
STATIC
const struct cpu_ops *
MpOps (
  void      *Ctx,
  unsigned  Number
  )
{
  (void)Ctx;
  (void)Number;
  return &gEfiptCpuOps;
}

STATIC
VOID
EFIAPI
OnMpServices (
  IN EFI_EVENT  Event,
  IN VOID       *Context
  )
{
  UINTN                  All;
  UINTN                  Enabled;
  UINTN                  Self;
  UINT32                 Index;
  UINT32                 Running;
  struct fwtrace_rec     *Ap;

  if (EFI_ERROR (gBS->LocateProtocol (&gEfiMpServiceProtocolGuid, mMpRegistration, (VOID **)&mMp))) {
    return;
  }

  gBS->CloseEvent (Event);
  mMpEvent = NULL;
  if (EFI_ERROR (mMp->GetNumberOfProcessors (mMp, &All, &Enabled)) ||
      EFI_ERROR (mMp->WhoAmI (mMp, &Self)))
  {
    DEBUG ((DEBUG_ERROR, "EfiptDxe: --cpus: MP services cannot count the CPUs: only the boot processor is traced\n"));
    return;
  }

  mMpView.count  = (unsigned)All;
  mMpView.self   = (unsigned)Self;
  mMpView.info   = MpInfo;
  mMpView.on_cpu = MpOnCpu;
  mMpView.ops    = MpOps;
  mMpView.ctx    = NULL;
  Running        = boottrace_aps_start (mAps, mRec, &mMpView, &gEfiptReservedMem);
  DEBUG ((DEBUG_INFO, "EfiptDxe: --cpus: %u CPUs, %u application processors tracing\n", (UINT32)All, Running));
  for (Index = 0; Index < mAps->nrec; Index++) {
    Ap = &mAps->rec[Index];
    DEBUG ((
      DEBUG_INFO,
      "EfiptDxe: CPU %u (APIC ID 0x%x): %a%a%a\n",
      Ap->cpu_number,
      Ap->apic_id,
      fwtrace_status_name (Ap->status),
      Ap->reason[0] != 0 ? ": " : "",
      Ap->reason
      ));
  }

  if (mRec->reason[0] != 0) {
    DEBUG ((DEBUG_INFO, "EfiptDxe: %a\n", mRec->reason));
  }
}

VOID
CpusStart (
  VOID
  )
{
  STATIC struct fwtrace_opts  Opts;
  struct strbuf               Err;
  char                        Text[160];

  sb_init (&Err, Text, sizeof (Text));
  if ((mRec->status != FWTRACE_RUNNING) || (fwtrace_parse_options (&Opts, mRec->options, &Err) != 0) ||
      !Opts.cpus_given)
  {
    return;
  }

  mAps = AllocateZeroPool (sizeof (*mAps));
  if (mAps == NULL) {
    DEBUG ((DEBUG_ERROR, "EfiptDxe: --cpus: no memory for the CPUs' state: only the boot processor is traced\n"));
    return;
  }

  mMpEvent = EfiCreateProtocolNotifyEvent (&gEfiMpServiceProtocolGuid, TPL_CALLBACK, OnMpServices, NULL, &mMpRegistration);
}

VOID
CpusStop (
  IN UINT32  Where
  )
{
  UINT32  Failed;

  if ((mMpEvent != NULL) && (Where != FWTRACE_STOP_EXIT_BOOT_SERVICES)) {
    /* MP services never came: no AP was started (no CloseEvent in ExitBootServices) */
    gBS->CloseEvent (mMpEvent);
    mMpEvent = NULL;
    DEBUG ((DEBUG_WARN, "EfiptDxe: --cpus: no MP services by %a: only the boot processor was traced\n", fwtrace_stop_name (Where)));
  }

  if (mAps == NULL) {
    return;
  }

  Failed = boottrace_aps_stop (mAps, Where, &gEfiptCpuOps);
  if (Failed != 0) {
    DEBUG ((DEBUG_ERROR, "EfiptDxe: %u application processors did not run the stop: %a\n", Failed, mAps->msg));
  }
}

UINT32
CpusRecords (
  VOID
  )
{
  return mAps != NULL ? mAps->nrec : 0;
}

VOID
CpusPut (
  IN struct fwtrace_rec  *Table
  )
{
  if (mAps != NULL) {
    boottrace_aps_put (mAps, Table);
  }
}
