/** @file
  EfiptDxe's image record: every image that loads while the trace runs,
  with its range, entry, CodeView (PDB) path and name, for images.json.

  - DXE images: the loaded image protocol, from the start (the DXE core and
    drivers dispatched before EfiptDxe) and by notification after; the PE
    headers give the entry and the PDB path (efipt's core/pe_info.c), the
    FvFile node the GUID, the volume's UI section the name where no PDB
    path names it.
  - PEI images loaded into memory (PeiCore and PEIMs shadowed after memory
    discovery, DxeIpl among them): the boot-services-code allocation HOBs
    that start with a PE image.
  - PEI modules that ran in place (from a firmware volume): EfiptPei's
    HOB of every volume's SEC, PEI core and PEIM files, whose TE or PE
    headers give where they run.
**/
#include "EfiptDxe.h"
#include <Guid/DebugImageInfoTable.h>
#include <Guid/EfiptBootTrace.h>
#include <Guid/EventGroup.h>
#include <Protocol/FirmwareVolume2.h>
#include <Protocol/LoadedImage.h>
#include <Library/BaseMemoryLib.h>
#include <Library/DebugLib.h>
#include <Library/DevicePathLib.h>
#include <Library/HobLib.h>
#include <Library/MemoryAllocationLib.h>
#include <Library/UefiBootServicesTableLib.h>
#include <Library/UefiLib.h>
#include "core/pe_info.h"


STATIC EFI_EVENT  mImageEvent;
STATIC VOID       *mImageRegistration;
STATIC BOOLEAN    mStopped;
STATIC UINT32     mDropped;

/* Unloaded images whose pages are to be kept (see OnMemoryMapChange) */
STATIC EFI_DEBUG_IMAGE_INFO_TABLE_HEADER  *mDebugTable;
STATIC UINT32                             mDebugSize;
STATIC BOOLEAN                            mPending[FWTRACE_MAX_IMAGES];
STATIC UINT32                             mKept, mLost, mPendingCount;

struct fwtrace_image *
ImageAt (
  UINT64  Address
  )
{
  struct fwtrace_image  *Img;
  UINT32                Index;

  Img = fwtrace_images (mRec);
  for (Index = 0; Index < mRec->nimages; Index++) {
    if ((Address >= Img[Index].base) && (Address - Img[Index].base < Img[Index].size)) {
      return &Img[Index];
    }
  }

  return NULL;
}

/* The UI section of file Name in the volume on Handle, as ASCII. */
STATIC
VOID
UiName (
  IN  EFI_HANDLE                     Handle,
  IN  EFI_FIRMWARE_VOLUME2_PROTOCOL  *Fv,
  IN  CONST EFI_GUID                 *Name,
  OUT char                           *Out,
  IN  UINTN                          Cap
  )
{
  EFI_STATUS  Status;
  CHAR16      *Ui;
  UINTN       Size;
  UINT32      Auth;
  UINTN       Index;

  if ((Fv == NULL) && ((Handle == NULL) ||
                       EFI_ERROR (gBS->HandleProtocol (Handle, &gEfiFirmwareVolume2ProtocolGuid, (VOID **)&Fv))))
  {
    return;
  }

  Ui     = NULL;
  Size   = 0;
  Status = Fv->ReadSection (Fv, Name, EFI_SECTION_USER_INTERFACE, 0, (VOID **)&Ui, &Size, &Auth);
  if (EFI_ERROR (Status)) {
    return;
  }

  for (Index = 0; Index + 1 < Cap && Index < Size / sizeof (CHAR16) && Ui[Index] != 0; Index++) {
    Out[Index] = (Ui[Index] >= 0x20 && Ui[Index] < 0x7f) ? (char)Ui[Index] : '?';
  }

  Out[Index] = 0;
  FreePool (Ui);
}

/* Add one image unless one at Base is recorded; returns it, or NULL. */
STATIC
struct fwtrace_image *
Add (
  IN UINT64  Base,
  IN UINT64  Size,
  IN UINT32  CodeType,
  IN UINT32  Flags
  )
{
  struct fwtrace_image  *Img;
  UINT32                Index;

  if ((Size == 0) || (Base + Size < Base)) {
    return NULL;
  }

  Img = fwtrace_images (mRec);
  for (Index = 0; Index < mRec->nimages; Index++) {
    if ((Img[Index].base == Base) && ((Img[Index].flags & FWTRACE_IMG_UNLOADED) == 0)) {
      return NULL;
    }
  }

  if (mRec->nimages >= mRec->max_images) {
    mDropped++;
    return NULL;
  }

  Img = &Img[mRec->nimages++];
  ZeroMem (Img, sizeof (*Img));
  Img->base      = Base;
  Img->size      = Size;
  Img->code_type = CodeType;
  Img->flags     = Flags;
  return Img;
}

/* Entry and PDB path from the headers of an image in memory. */
STATIC
VOID
FromHeaders (
  IN struct fwtrace_image  *Img
  )
{
  struct pe_info  Pe;

  if (pe_read_info ((const uint8_t *)(UINTN)Img->base, (size_t)Img->size, true, &Pe) != PE_OK) {
    return;
  }

  Img->entry = Img->base + Pe.entry_rva;
  fwtrace_put_str (Img->pdb, sizeof (Img->pdb), Pe.debug_path);
  if (Pe.debug_path[0] != 0) {
    pe_debug_name (Pe.debug_path, Img->name, sizeof (Img->name));
  }
}

STATIC
VOID
RecordHandle (
  IN EFI_HANDLE  Handle
  )
{
  EFI_LOADED_IMAGE_PROTOCOL  *Li;
  struct fwtrace_image       *Img;
  EFI_DEVICE_PATH_PROTOCOL   *Node;
  CONST EFI_GUID             *Name;

  if (EFI_ERROR (gBS->HandleProtocol (Handle, &gEfiLoadedImageProtocolGuid, (VOID **)&Li))) {
    return;
  }

  Img = Add ((UINTN)Li->ImageBase, Li->ImageSize, Li->ImageCodeType, FWTRACE_IMG_DXE);
  if (Img == NULL) {
    return;
  }

  FromHeaders (Img);
  for (Node = Li->FilePath; Node != NULL && !IsDevicePathEnd (Node); Node = NextDevicePathNode (Node)) {
    Name = EfiGetNameGuidFromFwVolDevicePathNode ((MEDIA_FW_VOL_FILEPATH_DEVICE_PATH *)Node);
    if (Name != NULL) {
      CopyMem (Img->guid, Name, sizeof (Img->guid));
      if (Img->name[0] == 0) {
        UiName (Li->DeviceHandle, NULL, Name, Img->name, sizeof (Img->name));
      }

      break;
    }
  }
}

/* Is an image at Base still in the DXE core's debug image info table? */
STATIC
BOOLEAN
InDebugTable (
  IN UINT64  Base
  )
{
  EFI_DEBUG_IMAGE_INFO  *Table;
  UINT32                Found;
  UINTN                 Index;

  Table = mDebugTable->EfiDebugImageInfoTable;
  Found = 0;
  /* TableSize counts the used slots; free slots between them are NULL */
  for (Index = 0; Table != NULL && Found < mDebugTable->TableSize; Index++) {
    if (Table[Index].NormalImage == NULL) {
      continue;
    }

    Found++;
    if ((Table[Index].NormalImage->LoadedImageProtocolInstance != NULL) &&
        ((UINTN)Table[Index].NormalImage->LoadedImageProtocolInstance->ImageBase == Base))
    {
      return TRUE;
    }
  }

  return FALSE;
}

/* An image whose pages were not free before the next image loaded: its
   code may be overwritten, the trace may not decode across it. */
STATIC
VOID
GiveUpPending (
  VOID
  )
{
  UINT32  Index;

  for (Index = 0; Index < mRec->nimages; Index++) {
    if (mPending[Index]) {
      mPending[Index] = FALSE;
      mPendingCount--;
      mLost++;
      DEBUG ((DEBUG_WARN, "EfiptDxe: the pages of unloaded %a were not kept\n", fwtrace_images (mRec)[Index].name));
    }
  }
}

/*
  A DXE image unloaded while the trace runs (a driver whose entry point
  failed) frees its pages, and the next image may load over them: one
  address would then have held two codes, and a trace holding both cannot
  be decoded with one copy of the code. So the pages of an unloaded image
  are taken back at once (boot services code, released to the OS like all
  of it), before anything else can have them: its code stays where it ran,
  and efipt.efi collect snapshots it. The DXE core signals the memory map
  change event group after each change of the map (UEFI 2.10, 7.1
  EFI_EVENT_GROUP_MEMORY_MAP_CHANGE); an unload shows in the debug image
  info table first (its TableSize drops), the pages' free after.
*/
STATIC
VOID
EFIAPI
OnMemoryMapChange (
  IN EFI_EVENT  Event,
  IN VOID       *Context
  )
{
  struct fwtrace_image  *Img;
  UINT32                Index;
  EFI_PHYSICAL_ADDRESS  Address;
  UINTN                 Pages;

  if (mStopped || (mDebugTable == NULL)) {
    return;
  }

  Img = fwtrace_images (mRec);
  if (mDebugTable->TableSize < mDebugSize) {
    for (Index = 0; Index < mRec->nimages; Index++) {
      if (((Img[Index].flags & (FWTRACE_IMG_DXE | FWTRACE_IMG_UNLOADED)) == FWTRACE_IMG_DXE) &&
          !InDebugTable (Img[Index].base))
      {
        Img[Index].flags |= FWTRACE_IMG_UNLOADED;
        mPending[Index]   = TRUE;
        mPendingCount++;
      }
    }
  }

  mDebugSize = mDebugTable->TableSize;
  for (Index = 0; mPendingCount != 0 && Index < mRec->nimages; Index++) {
    if (!mPending[Index]) {
      continue;
    }

    Address = Img[Index].base & ~(UINT64)EFI_PAGE_MASK;
    Pages   = EFI_SIZE_TO_PAGES ((UINTN)(Img[Index].base + Img[Index].size - Address));
    if (!EFI_ERROR (gBS->AllocatePages (AllocateAddress, EfiBootServicesCode, Pages, &Address))) {
      mPending[Index]   = FALSE;
      mPendingCount--;
      Img[Index].flags |= FWTRACE_IMG_KEPT;
      mKept++;
    }
  }
}

STATIC
VOID
EFIAPI
OnImageLoaded (
  IN EFI_EVENT  Event,
  IN VOID       *Context
  )
{
  EFI_HANDLE  Handle;
  UINTN       Size;

  for ( ; ;) {
    Size = sizeof (Handle);
    if (EFI_ERROR (gBS->LocateHandle (ByRegisterNotify, NULL, mImageRegistration, &Size, &Handle))) {
      return;
    }

    if (!mStopped) {
      GiveUpPending ();
      RecordHandle (Handle);
    }
  }
}

/* PeiCore and PEIMs shadowed into memory: boot-services code allocated in
   PEI that begins with a PE image. */
STATIC
VOID
RecordPeiLoaded (
  VOID
  )
{
  EFI_PEI_HOB_POINTERS              Hob;
  EFI_HOB_MEMORY_ALLOCATION_HEADER  *A;
  struct pe_info                    Pe;
  struct fwtrace_image              *Img;
  CONST UINT8                       *P;

  for (Hob.Raw = GetHobList ();
       (Hob.Raw = GetNextHob (EFI_HOB_TYPE_MEMORY_ALLOCATION, Hob.Raw)) != NULL;
       Hob.Raw = GET_NEXT_HOB (Hob))
  {
    A = &Hob.MemoryAllocation->AllocDescriptor;
    P = (CONST UINT8 *)(UINTN)A->MemoryBaseAddress;
    if ((A->MemoryType != EfiBootServicesCode) || (A->MemoryLength < 0x40) || (P[0] != 'M') || (P[1] != 'Z')) {
      continue;
    }

    if ((pe_read_info (P, (size_t)A->MemoryLength, true, &Pe) != PE_OK) ||
        (Pe.size_of_image == 0) || (Pe.size_of_image > A->MemoryLength))
    {
      continue;
    }

    Img = Add (A->MemoryBaseAddress, Pe.size_of_image, EfiBootServicesCode, FWTRACE_IMG_PEI);
    if (Img != NULL) {
      FromHeaders (Img);
      CopyMem (Img->guid, &A->Name, sizeof (Img->guid));
    }
  }
}

/* The PEI modules EfiptPei found in the volumes, where they run in place. */
STATIC
VOID
RecordInPlace (
  VOID
  )
{
  VOID                        *Hob;
  CONST struct fwtrace_image  *Pei;
  UINTN                       Count;
  UINTN                       Index;
  struct fwtrace_image        *Img;

  for (Hob = GetFirstGuidHob (&gEfiptPeiImagesHobGuid); Hob != NULL;
       Hob = GetNextGuidHob (&gEfiptPeiImagesHobGuid, GET_NEXT_HOB (Hob)))
  {
    Pei   = GET_GUID_HOB_DATA (Hob);
    Count = GET_GUID_HOB_DATA_SIZE (Hob) / sizeof (*Pei);
    for (Index = 0; Index < Count; Index++) {
      Img = Add (Pei[Index].base, Pei[Index].size, Pei[Index].code_type, FWTRACE_IMG_PEI);
      if (Img != NULL) {
        CopyMem (Img, &Pei[Index], sizeof (*Img));
        /* the names come from firmware memory: terminated here */
        Img->name[sizeof (Img->name) - 1] = 0;
        Img->pdb[sizeof (Img->pdb) - 1]   = 0;
      }
    }
  }
}

VOID
ImagesStart (
  VOID
  )
{
  EFI_HANDLE  *Handles;
  UINTN       Count;
  UINTN       Index;
  EFI_EVENT   Event;

  if (!EFI_ERROR (gBS->LocateHandleBuffer (ByProtocol, &gEfiLoadedImageProtocolGuid, NULL, &Count, &Handles))) {
    for (Index = 0; Index < Count; Index++) {
      RecordHandle (Handles[Index]);
    }

    FreePool (Handles);
  }

  RecordPeiLoaded ();
  /* only while something is traced (Intel PT, or the markers for QEMU) */
  if ((mRec->status == FWTRACE_RUNNING) || ((mRec->flags & FWTRACE_F_MARKERS) != 0)) {
    if (!EFI_ERROR (EfiGetSystemConfigurationTable (&gEfiDebugImageInfoTableGuid, (VOID **)&mDebugTable)) &&
        (mDebugTable != NULL))
    {
      mDebugSize = mDebugTable->TableSize;
      if (EFI_ERROR (gBS->CreateEventEx (EVT_NOTIFY_SIGNAL, TPL_CALLBACK, OnMemoryMapChange, NULL, &gEfiEventMemoryMapChangeGuid, &Event))) {
        mDebugTable = NULL;
      }
    }

    if (mDebugTable == NULL) {
      DEBUG ((DEBUG_WARN, "EfiptDxe: no debug image info table: unloaded images' pages may be reused while tracing\n"));
    }
  }

  mImageEvent = EfiCreateProtocolNotifyEvent (
                  &gEfiLoadedImageProtocolGuid,
                  TPL_CALLBACK,
                  OnImageLoaded,
                  NULL,
                  &mImageRegistration
                  );
  if (mImageEvent == NULL) {
    DEBUG ((DEBUG_ERROR, "EfiptDxe: no image load notification: images after EfiptDxe are not named\n"));
  }
}

VOID
ImagesStop (
  VOID
  )
{
  EFI_HANDLE                 *Handles;
  UINTN                      Count;
  UINTN                      Index;
  UINT32                     Rec;
  struct fwtrace_image       *Img;
  EFI_LOADED_IMAGE_PROTOCOL  *Li;
  BOOLEAN                    Found;

  /* the images loaded since the last notification, then no more */
  GiveUpPending ();
  if (mImageEvent != NULL) {
    OnImageLoaded (NULL, NULL);
    gBS->CloseEvent (mImageEvent);
    mImageEvent = NULL;
  }

  mStopped = TRUE;
  /* DXE images no longer loaded (those unloaded while tracing were marked
     already, and their pages kept) */
  Img = fwtrace_images (mRec);
  if (!EFI_ERROR (gBS->LocateHandleBuffer (ByProtocol, &gEfiLoadedImageProtocolGuid, NULL, &Count, &Handles))) {
    for (Rec = 0; Rec < mRec->nimages; Rec++) {
      if ((Img[Rec].flags & (FWTRACE_IMG_DXE | FWTRACE_IMG_UNLOADED)) != FWTRACE_IMG_DXE) {
        continue;
      }

      Found = FALSE;
      for (Index = 0; Index < Count && !Found; Index++) {
        Found = !EFI_ERROR (gBS->HandleProtocol (Handles[Index], &gEfiLoadedImageProtocolGuid, (VOID **)&Li)) &&
                (UINTN)Li->ImageBase == Img[Rec].base;
      }

      if (!Found) {
        Img[Rec].flags |= FWTRACE_IMG_UNLOADED;
      }
    }

    FreePool (Handles);
  }

  RecordInPlace ();
  if (mDropped != 0) {
    DEBUG ((DEBUG_WARN, "EfiptDxe: %u images not recorded (more than %u)\n", mDropped, mRec->max_images));
  }

  DEBUG ((DEBUG_INFO, "EfiptDxe: %u images unloaded while tracing kept their pages, %u did not\n", mKept, mLost));
}
