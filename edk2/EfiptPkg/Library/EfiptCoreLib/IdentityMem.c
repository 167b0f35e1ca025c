/** @file
  The struct ptout_mem accessors over physical memory where firmware runs
  identity-mapped (a physical address is a pointer): PEI and DXE both,
  trace buffers in reserved pages through the phase's MemoryAllocationLib.
**/
#include <Base.h>
#include <Library/BaseMemoryLib.h>
#include <Library/MemoryAllocationLib.h>
#include <Library/EfiptCoreLib.h>

/* The trace buffer: reserved pages aligned as ToPA regions and single-range
   buffers require (SDM 33.2.7.1, 33.2.7.2); in PEI an allocation HOB keeps
   them from DXE and the OS, in DXE the memory map does. */
static int
ReservedAlloc (
  void      *Ctx,
  uint64_t  Size,
  uint64_t  Align,
  uint64_t  *Phys
  )
{
  VOID  *P;

  (void)Ctx;
  P = AllocateAlignedReservedPages ((UINTN)((Size + 4095) / 4096), (UINTN)Align);
  if (P == NULL) {
    return -1;
  }

  *Phys = (UINTN)P;
  return 0;
}

static void
ReservedFree (
  void      *Ctx,
  uint64_t  Phys,
  uint64_t  Size
  )
{
  (void)Ctx;
  FreeAlignedPages ((VOID *)(UINTN)Phys, (UINTN)((Size + 4095) / 4096));
}

void
EfiptMemWrite64 (
  void      *Ctx,
  uint64_t  Phys,
  uint64_t  Value
  )
{
  (void)Ctx;
  *(volatile UINT64 *)(UINTN)Phys = Value;
}

void
EfiptMemFill (
  void      *Ctx,
  uint64_t  Phys,
  int       Byte,
  uint64_t  Len
  )
{
  (void)Ctx;
  SetMem ((VOID *)(UINTN)Phys, (UINTN)Len, (UINT8)Byte);
}

void
EfiptMemRead (
  void      *Ctx,
  uint64_t  Phys,
  void      *Dst,
  size_t    Len
  )
{
  (void)Ctx;
  CopyMem (Dst, (VOID *)(UINTN)Phys, Len);
}

const struct ptout_mem  gEfiptReservedMem = {
  .alloc   = ReservedAlloc,
  .free    = ReservedFree,
  .write64 = EfiptMemWrite64,
  .fill    = EfiptMemFill,
  .read    = EfiptMemRead,
  .ctx     = 0,
};
