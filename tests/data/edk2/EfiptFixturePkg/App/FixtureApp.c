/*
 * The efipt EDK2 fixture's application: a few functions that call each
 * other (a loop, a recursion, a call through a pointer), so that a trace of
 * it has a call tree to name. Built by tests/data/edk2/make_fixture.sh.
 */
#include <Uefi.h>
#include <Library/UefiLib.h>
#include <Library/UefiApplicationEntryPoint.h>

#define NOINLINE  __attribute__ ((noinline))

STATIC volatile UINT32  mSink;

NOINLINE
STATIC
UINT32
FixtureChecksum (
  IN CONST UINT8  *Bytes,
  IN UINTN        Count
  )
{
  UINT32  Sum;
  UINTN   Index;

  Sum = 0;
  for (Index = 0; Index < Count; Index++) {
    Sum = (Sum << 1 | Sum >> 31) ^ Bytes[Index];
  }

  return Sum;
}

NOINLINE
STATIC
UINT32
FixtureFib (
  IN UINT32  N
  )
{
  return N < 2 ? N : FixtureFib (N - 1) + FixtureFib (N - 2);
}

typedef UINT32 (*FIXTURE_STEP)(
  IN UINT32  Value
  );

NOINLINE
STATIC
UINT32
FixtureDouble (
  IN UINT32  Value
  )
{
  mSink = Value;
  return Value * 2;
}

NOINLINE
STATIC
UINT32
FixtureRun (
  IN FIXTURE_STEP  Step,
  IN UINT32        Rounds
  )
{
  UINT32  Value;

  Value = 1;
  while (Rounds-- > 0) {
    Value = Step (Value) + FixtureChecksum ((CONST UINT8 *)&Value, sizeof (Value));
  }

  return Value;
}

EFI_STATUS
EFIAPI
FixtureAppMain (
  IN EFI_HANDLE        ImageHandle,
  IN EFI_SYSTEM_TABLE  *SystemTable
  )
{
  UINT32  Result;

  Result = FixtureRun (FixtureDouble, 8) + FixtureFib (10);
  Print (L"efipt fixture: %u\n", Result);
  return EFI_SUCCESS;
}
