/** @file
  EfiptPei: the start of the firmware's boot trace (docs/edk2.md).

  At its dispatch it only asks to be called when permanent memory is
  installed (the memory-discovered PPI), and, where the variable PPI is not
  there yet, when it is. Then: the options come from the
  EfiptNextBoot variable (efipt.efi arm --next-boot) or PcdEfiptOptions;
  boottrace_start() (efipt's arch/x86_64/boot_trace.c) validates them
  against CPUID exactly as efipt.efi trace does, reserves the buffer
  (EfiReservedMemoryType pages, so an allocation HOB keeps it from DXE and
  the OS) and starts Intel PT on this processor. The record goes to
  EfiptDxe in a GUID HOB, whatever happened, with the reason when nothing
  was traced. Nothing here writes a global: PEIMs may run from flash.
**/
#include <PiPei.h>
#include <Guid/EfiptBootTrace.h>
#include <Ppi/ReadOnlyVariable2.h>
#include <Library/BaseMemoryLib.h>
#include <Library/DebugLib.h>
#include <Library/HobLib.h>
#include <Library/MemoryAllocationLib.h>
#include <Library/PcdLib.h>
#include <Library/PeiServicesLib.h>
#include <Library/EfiptCoreLib.h>
#include "arch/x86_64/trace_marker.h"
#include "core/pe_info.h"

/* PEI modules recorded from the volumes (OVMF has about a dozen) */
#define MAX_PEI_IMAGES  96

/**
  The options text: the EfiptNextBoot variable where it exists, else
  PcdEfiptOptions. A variable that is not a usable text is refused, with
  the reason, rather than replaced by the PCD: the next boot does what it
  was asked or says why not.

  @retval 0   Text holds the options; *Flags says where they came from.
  @retval -1  The variable is unusable; Why says why.
**/
STATIC
int
ReadOptions (
  OUT CHAR8          *Text,
  IN  UINTN          Cap,
  OUT UINT32         *Flags,
  IN  struct strbuf  *Why
  )
{
  EFI_STATUS                       Status;
  EFI_PEI_READ_ONLY_VARIABLE2_PPI  *Var;
  UINT8                            Bytes[FWTRACE_OPTIONS_MAX + 8];
  UINTN                            Size;
  CONST CHAR8                      *Pcd;
  UINTN                            Index;

  if (FeaturePcdGet (PcdEfiptNextBootVariable)) {
    Status = PeiServicesLocatePpi (&gEfiPeiReadOnlyVariable2PpiGuid, 0, NULL, (VOID **)&Var);
    if (!EFI_ERROR (Status)) {
      Size   = sizeof (Bytes);
      Status = Var->GetVariable (
                      Var,
                      EFIPT_NEXT_BOOT_VARIABLE_NAME,
                      &gEfiptNextBootVariableGuid,
                      NULL,
                      &Size,
                      Bytes
                      );
      if (Status == EFI_BUFFER_TOO_SMALL) {
        sb_printf (Why, "the " FWTRACE_VARIABLE_NAME " variable holds %llu bytes (at most %u)", (unsigned long long)Size, FWTRACE_OPTIONS_MAX - 1);
        *Flags |= BOOTTRACE_FROM_VARIABLE;
        return -1;
      }

      if (!EFI_ERROR (Status)) {
        *Flags |= BOOTTRACE_FROM_VARIABLE;
        sb_puts (Why, "the " FWTRACE_VARIABLE_NAME " variable: ");
        if (fwtrace_options_text (Bytes, Size, Text, Cap, Why) != 0) {
          return -1;
        }

        sb_reset (Why);
        return 0;
      }
    }
  }

  Pcd = (CONST CHAR8 *)PcdGetPtr (PcdEfiptOptions);
  for (Index = 0; Pcd != NULL && Pcd[Index] != 0 && Index + 1 < Cap; Index++) {
    Text[Index] = Pcd[Index];
  }

  Text[Index] = 0;
  return 0;
}

/**
  Test builds (PcdEfiptEmulatedCaps): the CPU profile of the
  EfiptEmulatedCaps variable (efipt.efi arm --emulated-caps), which
  boottrace_start_emulated uses under QEMU's TCG alone.

  @retval Profile  parsed from the variable.
  @retval NULL     none (no variable, or not a profile: said in the log).
**/
STATIC
CONST struct cpuid_set *
ReadEmulatedCaps (
  IN struct cpuid_set  *Profile,
  IN CHAR8             *Text
  )
{
  EFI_STATUS                       Status;
  EFI_PEI_READ_ONLY_VARIABLE2_PPI  *Var;
  UINTN                            Size;
  unsigned                         Line;

  if (!FeaturePcdGet (PcdEfiptEmulatedCaps) ||
      EFI_ERROR (PeiServicesLocatePpi (&gEfiPeiReadOnlyVariable2PpiGuid, 0, NULL, (VOID **)&Var)))
  {
    return NULL;
  }

  Size   = FWTRACE_CAPS_MAX;
  Status = Var->GetVariable (Var, EFIPT_EMULATED_CAPS_VARIABLE_NAME, &gEfiptNextBootVariableGuid, NULL, &Size, Text);
  if (EFI_ERROR (Status)) {
    return NULL;
  }

  Line = 0;
  if (cpuidtxt_parse (Profile, Text, Size, 0, &Line) != CPUIDTXT_OK) {
    DEBUG ((DEBUG_ERROR, "EfiptPei: the " FWTRACE_CAPS_VARIABLE_NAME " variable is not a CPU profile (line %u): ignored\n", Line));
    return NULL;
  }

  return Profile;
}

/* One module that runs in place: its TE or PE32 image inside the volume. */
STATIC
BOOLEAN
InPlace (
  IN  EFI_PEI_FILE_HANDLE   File,
  IN  CONST EFI_FV_FILE_INFO  *Info,
  OUT struct fwtrace_image  *Img
  )
{
  VOID            *Data;
  UINTN           Left;
  struct pe_info  Pe;
  int             Rc;
  CHAR16          *Ui;
  UINTN           Index;

  if (!EFI_ERROR (PeiServicesFfsFindSectionData (EFI_SECTION_TE, File, &Data))) {
    Left = (UINTN)Info->Buffer + Info->BufferSize - (UINTN)Data;
    Rc   = pe_read_te (Data, Left, &Pe);
  } else if (!EFI_ERROR (PeiServicesFfsFindSectionData (EFI_SECTION_PE32, File, &Data))) {
    Left = (UINTN)Info->Buffer + Info->BufferSize - (UINTN)Data;
    Rc   = pe_read_info (Data, Left, false, &Pe);
  } else {
    return FALSE;
  }

  if ((Rc != PE_OK) || (Pe.image_base == 0) || (Pe.size_of_image == 0)) {
    return FALSE;
  }

  ZeroMem (Img, sizeof (*Img));
  Img->base      = Pe.image_base;
  Img->size      = Pe.size_of_image;
  Img->entry     = Pe.entry_rva != 0 ? Pe.image_base + Pe.entry_rva : 0;
  Img->code_type = FWTRACE_CODE_FIRMWARE_VOLUME;
  Img->flags     = FWTRACE_IMG_PEI;
  CopyMem (Img->guid, &Info->FileName, sizeof (Img->guid));
  fwtrace_put_str (Img->pdb, sizeof (Img->pdb), Pe.debug_path);
  if (!EFI_ERROR (PeiServicesFfsFindSectionData (EFI_SECTION_USER_INTERFACE, File, (VOID **)&Ui))) {
    for (Index = 0; Index + 1 < sizeof (Img->name) && Ui[Index] != 0; Index++) {
      Img->name[Index] = (Ui[Index] >= 0x20 && Ui[Index] < 0x7f) ? (char)Ui[Index] : '?';
    }
  }

  return TRUE;
}

/* SEC, the PEI core and the PEIMs of every volume PEI knows, where they
   run in place: their code is what the trace shows before (and where they
   are not) copied into memory. A HOB for EfiptDxe's image record. */
STATIC
VOID
RecordVolumes (
  VOID
  )
{
  struct fwtrace_image  *Img;
  UINTN                 Count;
  UINTN                 Instance;
  EFI_PEI_FV_HANDLE     Volume;
  EFI_PEI_FILE_HANDLE   File;
  EFI_FV_FILE_INFO      Info;

  Img = AllocatePool (MAX_PEI_IMAGES * sizeof (*Img));
  if (Img == NULL) {
    return;
  }

  Count = 0;
  for (Instance = 0; !EFI_ERROR (PeiServicesFfsFindNextVolume (Instance, &Volume)); Instance++) {
    for (File = NULL; Count < MAX_PEI_IMAGES &&
         !EFI_ERROR (PeiServicesFfsFindNextFile (EFI_FV_FILETYPE_ALL, Volume, &File));)
    {
      if (EFI_ERROR (PeiServicesFfsGetFileInfo (File, &Info))) {
        continue;
      }

      if (((Info.FileType == EFI_FV_FILETYPE_SECURITY_CORE) || (Info.FileType == EFI_FV_FILETYPE_PEI_CORE) ||
           (Info.FileType == EFI_FV_FILETYPE_PEIM) || (Info.FileType == EFI_FV_FILETYPE_COMBINED_PEIM_DRIVER)) &&
          InPlace (File, &Info, &Img[Count]))
      {
        Count++;
      }
    }
  }

  if ((Count != 0) && (BuildGuidDataHob (&gEfiptPeiImagesHobGuid, Img, Count * sizeof (*Img)) == NULL)) {
    DEBUG ((DEBUG_ERROR, "EfiptPei: no room for the PEI modules' HOB\n"));
  }

  FreePool (Img);
}

/* The record into its HOB: a new one, or the one that said it waited. */
STATIC
VOID
PutRecord (
  IN CONST struct fwtrace_rec  *Rec
  )
{
  VOID  *Hob;

  Hob = GetFirstGuidHob (&gEfiptBootTraceHobGuid);
  if ((Hob != NULL) && (GET_GUID_HOB_DATA_SIZE (Hob) == sizeof (*Rec))) {
    CopyMem (GET_GUID_HOB_DATA (Hob), Rec, sizeof (*Rec));
  } else if (BuildGuidDataHob (&gEfiptBootTraceHobGuid, (VOID *)Rec, sizeof (*Rec)) == NULL) {
    DEBUG ((DEBUG_ERROR, "EfiptPei: no room for the HOB: EfiptDxe will not find the trace\n"));
  }
}

/**
  Permanent memory (and the variable PPI) is there: start the trace, record
  what happened.
**/
STATIC
VOID
StartTrace (
  VOID
  )
{
  UINTN                   Pages;
  UINT8                   *Mem;
  struct boottrace_work   *Work;
  struct fwtrace_rec      *Rec;
  struct cpuid_set        *Profile;
  CHAR8                   *CapsText;
  CONST struct cpuid_set  *Emulated;
  CHAR8                   Text[FWTRACE_OPTIONS_MAX];
  UINT32                  Flags;
  struct strbuf           Why;

  Pages = EFI_SIZE_TO_PAGES (ALIGN_VALUE (sizeof (*Work), 8) + ALIGN_VALUE (sizeof (*Rec), 8) + sizeof (*Profile) + FWTRACE_CAPS_MAX);
  Mem   = AllocatePages (Pages);
  if (Mem == NULL) {
    DEBUG ((DEBUG_ERROR, "EfiptPei: no memory for its work area: not tracing\n"));
    return;
  }

  Work = (struct boottrace_work *)Mem;
  Rec  = (struct fwtrace_rec *)(Mem + ALIGN_VALUE (sizeof (*Work), 8));
  Profile  = (struct cpuid_set *)((UINT8 *)Rec + ALIGN_VALUE (sizeof (*Rec), 8));
  CapsText = (CHAR8 *)(Profile + 1);
  Emulated = ReadEmulatedCaps (Profile, CapsText);
  fwtrace_init (Rec, 0);
  sb_init (&Why, Rec->reason, sizeof (Rec->reason));

  Flags = 0;
  if (FeaturePcdGet (PcdEfiptQemuMarkers)) {
    Flags |= BOOTTRACE_MARKERS;
  }

  if (FeaturePcdGet (PcdEfiptSynthetic)) {
    Flags |= BOOTTRACE_SYNTHETIC;
  }

  if (!FeaturePcdGet (PcdEfiptEnable)) {
    Rec->status = FWTRACE_OFF;
    sb_puts (&Why, "not traced: PcdEfiptEnable is FALSE");
  } else if (ReadOptions (Text, sizeof (Text), &Flags, &Why) != 0) {
    Rec->status = FWTRACE_BAD_OPTIONS;
    if ((Flags & BOOTTRACE_FROM_VARIABLE) != 0) {
      Rec->flags |= FWTRACE_F_VARIABLE;
    }
  } else if ((boottrace_start_emulated (Rec, Work, Text, Flags, Emulated, &gEfiptCpuOps, &gEfiptReservedMem) == FWTRACE_UNSUPPORTED) &&
             ((Rec->flags & FWTRACE_F_MARKERS) != 0))
  {
    /* where PT would have started: efipt qemu's trace begins here */
    trace_marker_start ();
  }

  DEBUG ((
    DEBUG_INFO,
    "EfiptPei: %a%a%a\n",
    fwtrace_status_name (Rec->status),
    Rec->reason[0] != 0 ? ": " : "",
    Rec->reason
    ));
  if (Rec->status == FWTRACE_RUNNING) {
    DEBUG ((
      DEBUG_INFO,
      "EfiptPei: %a trace, %Lu bytes at 0x%Lx, IA32_RTIT_CTL 0x%Lx, stop at %a\n",
      Rec->source == FWTRACE_SRC_SYNTHETIC ? "SYNTHETIC" : (Rec->flags & FWTRACE_F_EMULATED) != 0 ? "EMULATED Intel PT" : "Intel PT",
      Rec->buf_size,
      Rec->reg[0].base,
      Rec->rtit_ctl,
      fwtrace_stop_name (Rec->stop_at)
      ));
  }

  fwtrace_seal (Rec);
  PutRecord (Rec);
  RecordVolumes ();

  FreePages (Mem, Pages);
}

STATIC
EFI_STATUS
EFIAPI
OnVariableReady (
  IN EFI_PEI_SERVICES           **PeiServices,
  IN EFI_PEI_NOTIFY_DESCRIPTOR  *Notify,
  IN VOID                       *Ppi
  )
{
  StartTrace ();
  return EFI_SUCCESS;
}

STATIC CONST EFI_PEI_NOTIFY_DESCRIPTOR  mVariableReady = {
  EFI_PEI_PPI_DESCRIPTOR_NOTIFY_CALLBACK | EFI_PEI_PPI_DESCRIPTOR_TERMINATE_LIST,
  &gEfiPeiReadOnlyVariable2PpiGuid,
  OnVariableReady
};

/**
  Permanent memory is there. Where the EfiptNextBoot variable may choose
  this boot's options but cannot be read yet (the platform dispatches its
  variable PEIM later), the trace starts once it can: the variable is
  never ignored.
**/
STATIC
EFI_STATUS
EFIAPI
OnMemoryDiscovered (
  IN EFI_PEI_SERVICES           **PeiServices,
  IN EFI_PEI_NOTIFY_DESCRIPTOR  *Notify,
  IN VOID                       *Ppi
  )
{
  VOID  *Var;

  struct fwtrace_rec  *Rec;

  if (FeaturePcdGet (PcdEfiptEnable) && FeaturePcdGet (PcdEfiptNextBootVariable) &&
      EFI_ERROR (PeiServicesLocatePpi (&gEfiPeiReadOnlyVariable2PpiGuid, 0, NULL, &Var)) &&
      !EFI_ERROR (PeiServicesNotifyPpi ((EFI_PEI_NOTIFY_DESCRIPTOR *)&mVariableReady)))
  {
    /* what EfiptDxe will find if the PPI never comes */
    Rec = AllocatePool (sizeof (*Rec));
    if (Rec != NULL) {
      fwtrace_init (Rec, 0);
      Rec->status = FWTRACE_FAILED;
      fwtrace_put_str (
        Rec->reason,
        sizeof (Rec->reason),
        "EfiptPei waited for the variable PPI (EFI_PEI_READ_ONLY_VARIABLE2_PPI) to read the "
        FWTRACE_VARIABLE_NAME " variable, and it never came: the platform dispatches no "
        "variable PEIM (docs/edk2.md)"
        );
      fwtrace_seal (Rec);
      PutRecord (Rec);
      FreePool (Rec);
    }

    DEBUG ((DEBUG_INFO, "EfiptPei: waiting for the variable PPI to read EfiptNextBoot\n"));
    return EFI_SUCCESS;
  }

  StartTrace ();
  return EFI_SUCCESS;
}

STATIC CONST EFI_PEI_NOTIFY_DESCRIPTOR  mMemoryDiscovered = {
  EFI_PEI_PPI_DESCRIPTOR_NOTIFY_CALLBACK | EFI_PEI_PPI_DESCRIPTOR_TERMINATE_LIST,
  &gEfiPeiMemoryDiscoveredPpiGuid,
  OnMemoryDiscovered
};

EFI_STATUS
EFIAPI
EfiptPeiEntry (
  IN       EFI_PEI_FILE_HANDLE  FileHandle,
  IN CONST EFI_PEI_SERVICES     **PeiServices
  )
{
  EFI_STATUS  Status;

  Status = PeiServicesNotifyPpi ((EFI_PEI_NOTIFY_DESCRIPTOR *)&mMemoryDiscovered);
  if (EFI_ERROR (Status)) {
    DEBUG ((DEBUG_ERROR, "EfiptPei: cannot wait for permanent memory: %r\n", Status));
  }

  return EFI_SUCCESS;
}
