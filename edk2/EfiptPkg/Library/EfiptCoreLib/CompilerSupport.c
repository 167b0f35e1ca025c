/** @file
  The C compiler may call memcpy and memset for structure copies and
  initialisers in efipt's sources; EDK2 has no C library, so these forward
  to BaseMemoryLib.
**/
#include <Base.h>
#include <Library/BaseMemoryLib.h>

void *memcpy (void *Dst, const void *Src, UINTN Len);
void *memset (void *Dst, int Byte, UINTN Len);

void *
memcpy (
  void        *Dst,
  const void  *Src,
  UINTN       Len
  )
{
  return CopyMem (Dst, Src, Len);
}

void *
memset (
  void   *Dst,
  int    Byte,
  UINTN  Len
  )
{
  return SetMem (Dst, Len, (UINT8)Byte);
}
