/** @file
  The GUIDs of EfiptPkg (values in EfiptPkg.dec) and the name of the
  variable efipt.efi arm --next-boot writes. The record behind the HOB and
  the configuration table is struct fwtrace_rec of efipt's core/fwtrace.h.
**/
#ifndef EFIPT_BOOT_TRACE_GUID_H_
#define EFIPT_BOOT_TRACE_GUID_H_

extern EFI_GUID  gEfiptBootTraceHobGuid;
extern EFI_GUID  gEfiptBootTraceTableGuid;
/* EfiptPei -> EfiptDxe only: struct fwtrace_image[], the PEI modules of
   the volumes PEI knows, where they run in place */
extern EFI_GUID  gEfiptPeiImagesHobGuid;
extern EFI_GUID  gEfiptNextBootVariableGuid;

#define EFIPT_NEXT_BOOT_VARIABLE_NAME  L"EfiptNextBoot"
/* test builds (PcdEfiptEmulatedCaps): a CPU profile, same vendor GUID */
#define EFIPT_EMULATED_CAPS_VARIABLE_NAME  L"EfiptEmulatedCaps"

#endif
