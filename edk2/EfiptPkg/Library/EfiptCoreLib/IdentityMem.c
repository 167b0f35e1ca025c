/** @file
  The struct ptout_mem accessors over physical memory where firmware runs
  identity-mapped (a physical address is a pointer): PEI and DXE both.
**/
#include <Base.h>
#include <Library/BaseMemoryLib.h>
#include <Library/EfiptCoreLib.h>

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
