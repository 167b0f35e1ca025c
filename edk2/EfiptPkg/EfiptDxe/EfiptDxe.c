/** @file
  EfiptDxe: takes over the trace EfiptPei started, stops it at the stop
  point and publishes it for efipt.efi collect (docs/edk2.md).

  Dispatched first (APRIORI DXE): the HOB's record is checked (CRC, layout,
  the buffer inside EfiptPei's reserved allocation) before anything in it
  is believed; a record that fails is refused with the reason, and any PT
  still running is stopped. Intel PT itself needs nothing across the
  DxeIpl -> DxeCore handoff: the CPU keeps writing to physical memory.

  Stop points (--stop-at): ReadyToBoot (default), EndOfDxe,
  ExitBootServices, never (efipt.efi collect stops it). Whatever the stop
  point, TraceEn is cleared at ExitBootServices unless --into-os. The
  application processors (--cpus, Cpus.c) stop at the stop point, at
  ReadyToBoot at the latest, after the boot processor.
  The table is published at ReadyToBoot: the record, its images, the APs'
  records, sealed with a CRC-32 (resealed when ExitBootServices stops the
  trace later).
**/
#include "EfiptDxe.h"
#include <Guid/EfiptBootTrace.h>
#include <Guid/EventGroup.h>
#include <Library/BaseLib.h>
#include <Library/BaseMemoryLib.h>
#include <Library/DebugLib.h>
#include <Library/HobLib.h>
#include <Library/MemoryAllocationLib.h>
#include <Library/PcdLib.h>
#include <Library/UefiBootServicesTableLib.h>
#include <Library/UefiLib.h>
#include <Library/UefiRuntimeServicesTableLib.h>
#include "arch/x86_64/trace_marker.h"

#define MAX_IMAGES  512
/* MSR_PLATFORM_INFO[15:8]: the nominal ratio timing decoders need */
#define MSR_PLATFORM_INFO_NUMBER  0xCE

struct fwtrace_rec            *mRec;
/* what is published: mRec, or with APs a copy with their records after the images */
STATIC struct fwtrace_rec     *mTable;
STATIC struct boottrace_work  mWork;
STATIC BOOLEAN                mPublished;

/* Is [Base, Base + Size) inside one reserved-memory allocation HOB, as
   EfiptPei's AllocateAlignedReservedPages left its buffer? */
STATIC
bool
ReservedByHob (
  void      *Ctx,
  uint64_t  Base,
  uint64_t  Size
  )
{
  EFI_PEI_HOB_POINTERS               Hob;
  EFI_HOB_MEMORY_ALLOCATION_HEADER  *A;

  (void)Ctx;
  for (Hob.Raw = GetHobList ();
       (Hob.Raw = GetNextHob (EFI_HOB_TYPE_MEMORY_ALLOCATION, Hob.Raw)) != NULL;
       Hob.Raw = GET_NEXT_HOB (Hob))
  {
    A = &Hob.MemoryAllocation->AllocDescriptor;
    if ((A->MemoryType == EfiReservedMemoryType) && (Base >= A->MemoryBaseAddress) &&
        (Size <= A->MemoryLength) && (Base - A->MemoryBaseAddress <= A->MemoryLength - Size))
    {
      return true;
    }
  }

  return false;
}

/* Stop any PT that runs, from the live CPUID alone (no record to trust). */
STATIC
VOID
Halt (
  IN struct strbuf  *Why
  )
{
  int  Rc;

  Rc = boottrace_halt (&mWork, &gEfiptCpuOps);
  if (Rc > 0) {
    sb_puts (Why, "; Intel PT was running: TraceEn cleared");
  } else if (Rc < 0) {
    sb_puts (Why, "; stopping Intel PT faulted");
  }
}

STATIC
VOID
TakeOver (
  VOID
  )
{
  VOID           *Hob;
  CONST VOID     *Data;
  UINTN          Size;
  struct strbuf  Why;
  char           Text[256];

  sb_init (&Why, Text, sizeof (Text));
  fwtrace_init (mRec, MAX_IMAGES);
  Hob = GetFirstGuidHob (&gEfiptBootTraceHobGuid);
  if (Hob == NULL) {
    sb_puts (&Why, "no record from EfiptPei (is EfiptPei.inf in the platform's PEI volume? see docs/edk2.md)");
    Halt (&Why);
    fwtrace_put_str (mRec->reason, sizeof (mRec->reason), Text);
    return;
  }

  Data = GET_GUID_HOB_DATA (Hob);
  Size = GET_GUID_HOB_DATA_SIZE (Hob);
  if (fwtrace_check (Data, Size, &Why) == 0) {
    CopyMem (mRec, Data, sizeof (*mRec));
    mRec->max_images = MAX_IMAGES;
    mRec->nimages    = 0;
    if ((boottrace_check_memory (mRec, ReservedByHob, NULL, &Why) == 0) &&
        (boottrace_adopt (mRec, &mWork, &gEfiptCpuOps, &Why) == 0))
    {
      return;
    }
  }

  /* Refused: nothing of the layout is used; the rest stays for the report. */
  Halt (&Why);
  mRec->status     = FWTRACE_BAD_HOB;
  mRec->stopped_at = FWTRACE_STOP_BAD_HOB;
  mRec->nreg       = 0;
  mRec->ntab       = 0;
  fwtrace_put_str (mRec->reason, sizeof (mRec->reason), "EfiptPei's record refused: ");
  fwtrace_put_str (mRec->reason + AsciiStrLen (mRec->reason), sizeof (mRec->reason) - AsciiStrLen (mRec->reason), Text);
}

STATIC
VOID
StopAt (
  IN UINT32  Where
  )
{
  struct strbuf  Msg;
  char           Text[512];
  BOOLEAN        Markers;
  int            Rc;

  Markers = (mRec->flags & FWTRACE_F_MARKERS) != 0 && mRec->status == FWTRACE_UNSUPPORTED;
  if ((mRec->status != FWTRACE_RUNNING) && !Markers) {
    return;
  }

  sb_init (&Msg, Text, sizeof (Text));
  Rc = boottrace_stop (mRec, &mWork, Where, &Msg);
  if (Markers) {
    if (Rc != 0) {
      return; /* the stop marker ran already */
    }

    /* where PT would have stopped: efipt qemu's trace ends here */
    trace_marker_stop ();
  }

  if ((mRec->status == FWTRACE_STOPPED) && (mRec->source == FWTRACE_SRC_HW)) {
    /* every CPU with Intel PT has MSR_PLATFORM_INFO */
    mRec->nom_freq = (UINT32)RShiftU64 (AsmReadMsr64 (MSR_PLATFORM_INFO_NUMBER), 8) & 0xff;
    mRec->have_nom = 1;
  }

  if ((mRec->status == FWTRACE_STOPPED) && (mRec->source == FWTRACE_SRC_SYNTHETIC) &&
      FeaturePcdGet (PcdEfiptSynthetic))
  {
    SyntheticFill (&mWork);
  }

  DEBUG ((
    DEBUG_INFO,
    "EfiptDxe: %a at %a%a%a\n",
    Markers ? "stop marker" : "trace stopped",
    fwtrace_stop_name (Where),
    Text[0] != 0 ? ": " : "",
    Text
    ));
  if (Rc != 0) {
    DEBUG ((DEBUG_ERROR, "EfiptDxe: stopping the trace failed: %a\n", Text));
  }
}

/* The table: the record, its images, the APs' records, the CRC over them;
   the test builds' damage after. No allocation (ExitBootServices). */
STATIC
VOID
Seal (
  VOID
  )
{
  if (mTable != mRec) {
    CopyMem (mTable, mRec, fwtrace_size_for (mRec->nimages, 0));
    CpusPut (mTable);
  }

  if (mTable->fault == FWTRACE_FAULT_STALE_TABLE) {
    mTable->status = FWTRACE_RUNNING;
    mTable->source = FWTRACE_SRC_HW;
  }

  fwtrace_seal (mTable);
  if (mTable->fault == FWTRACE_FAULT_FORGED_TABLE) {
    mTable->buf_size ^= 1;
  }
}

STATIC
VOID
Publish (
  VOID
  )
{
  EFI_STATUS  Status;

  if (!mPublished) {
    ImagesStop ();
    /* the variable chose this boot only */
    if ((mRec->flags & FWTRACE_F_VARIABLE) != 0) {
      Status = gRT->SetVariable (EFIPT_NEXT_BOOT_VARIABLE_NAME, &gEfiptNextBootVariableGuid, 0, 0, NULL);
      DEBUG ((DEBUG_INFO, "EfiptDxe: EfiptNextBoot variable used and deleted: %r\n", Status));
    }

    /* the images are final now: room for the APs' records after them */
    mTable = mRec;
    if (CpusRecords () != 0) {
      mTable = AllocateReservedPages (EFI_SIZE_TO_PAGES (fwtrace_size_for (mRec->nimages, CpusRecords ())));
      if (mTable == NULL) {
        /* the boot processor's record alone (the APs are stopped) */
        DEBUG ((DEBUG_ERROR, "EfiptDxe: no memory for the application processors' records: the table has the boot processor's alone\n"));
        mTable = mRec;
        fwtrace_put_str (mRec->reason + AsciiStrLen (mRec->reason), sizeof (mRec->reason) - AsciiStrLen (mRec->reason), "; no memory for the APs' records in the table");
      }
    }
  }

  Seal ();

  if (!mPublished) {
    Status = gBS->InstallConfigurationTable (&gEfiptBootTraceTableGuid, mTable);
    DEBUG ((
      DEBUG_INFO,
      "EfiptDxe: table at 0x%p: %a, %u images, %u other CPUs: %r\n",
      mTable,
      fwtrace_status_name (mTable->status),
      mTable->nimages,
      mTable->ncpus,
      Status
      ));
    mPublished = !EFI_ERROR (Status);
  }
}

STATIC
VOID
EFIAPI
OnEndOfDxe (
  IN EFI_EVENT  Event,
  IN VOID       *Context
  )
{
  if (mRec->stop_at == FWTRACE_STOP_END_OF_DXE) {
    StopAt (FWTRACE_STOP_END_OF_DXE);
    CpusStop (FWTRACE_STOP_END_OF_DXE);
  }

  gBS->CloseEvent (Event);
}

STATIC
VOID
EFIAPI
OnReadyToBoot (
  IN EFI_EVENT  Event,
  IN VOID       *Context
  )
{
  if (mRec->stop_at == FWTRACE_STOP_READY_TO_BOOT) {
    StopAt (FWTRACE_STOP_READY_TO_BOOT);
  }

  /* the APs at ReadyToBoot at the latest, whatever the stop point */
  CpusStop (FWTRACE_STOP_READY_TO_BOOT);
  Publish ();
}

/* No allocation here (UEFI 2.10, 7.4 ExitBootServices). */
STATIC
VOID
EFIAPI
OnExitBootServices (
  IN EFI_EVENT  Event,
  IN VOID       *Context
  )
{
  if ((mRec->stop_at == FWTRACE_STOP_EXIT_BOOT_SERVICES) || ((mRec->flags & FWTRACE_F_INTO_OS) == 0)) {
    StopAt (FWTRACE_STOP_EXIT_BOOT_SERVICES);
  }

  /* none still runs unless ReadyToBoot never came */
  CpusStop (FWTRACE_STOP_EXIT_BOOT_SERVICES);
  if (mPublished) {
    Seal ();
  }
}

EFI_STATUS
EFIAPI
EfiptDxeEntry (
  IN EFI_HANDLE        ImageHandle,
  IN EFI_SYSTEM_TABLE  *SystemTable
  )
{
  EFI_STATUS     Status;
  EFI_EVENT      Event;
  struct strbuf  Why;
  char           Text[128];

  mRec = AllocateReservedPages (EFI_SIZE_TO_PAGES (fwtrace_size_for (MAX_IMAGES, 0)));
  if (mRec == NULL) {
    sb_init (&Why, Text, sizeof (Text));
    sb_puts (&Why, "no memory for the table");
    Halt (&Why);
    DEBUG ((DEBUG_ERROR, "EfiptDxe: %a\n", Text));
    return EFI_OUT_OF_RESOURCES;
  }

  TakeOver ();
  DEBUG ((
    DEBUG_INFO,
    "EfiptDxe: %a%a%a\n",
    fwtrace_status_name (mRec->status),
    mRec->reason[0] != 0 ? ": " : "",
    mRec->reason
    ));
  ImagesStart ();
  CpusStart ();

  Status = gBS->CreateEventEx (EVT_NOTIFY_SIGNAL, TPL_CALLBACK, OnEndOfDxe, NULL, &gEfiEndOfDxeEventGroupGuid, &Event);
  if (EFI_ERROR (Status) && (mRec->stop_at == FWTRACE_STOP_END_OF_DXE)) {
    StopAt (FWTRACE_STOP_END_OF_DXE);
  }

  Status = EfiCreateEventReadyToBootEx (TPL_CALLBACK, OnReadyToBoot, NULL, &Event);
  if (EFI_ERROR (Status)) {
    DEBUG ((DEBUG_ERROR, "EfiptDxe: no ReadyToBoot event (%r): stopping now\n", Status));
    StopAt (FWTRACE_STOP_READY_TO_BOOT);
  }

  Status = gBS->CreateEventEx (EVT_NOTIFY_SIGNAL, TPL_NOTIFY, OnExitBootServices, NULL, &gEfiEventExitBootServicesGuid, &Event);
  if (EFI_ERROR (Status)) {
    /* nothing could stop PT before the OS runs: stop it now */
    DEBUG ((DEBUG_ERROR, "EfiptDxe: no ExitBootServices event (%r): stopping now\n", Status));
    StopAt (FWTRACE_STOP_EXIT_BOOT_SERVICES);
  }

  return EFI_SUCCESS;
}
