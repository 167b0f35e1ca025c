/*
 * A #GP handler for the duration of a run, so that an MSR access the CPU
 * refuses returns an error instead of hanging the machine in the firmware's
 * exception dump. Installed through EFI_CPU_ARCH_PROTOCOL (UEFI PI spec,
 * DXE CPU architectural protocol), which gnu-efi does not declare.
 */
#ifndef EFIPT_EFI_GP_GUARD_H
#define EFIPT_EFI_GP_GUARD_H

#include <efi.h>

/*
 * Install the handler for a short stretch of efipt's own MSR accesses, and
 * remove it before any other code runs (a traced image's own #GP must reach
 * the firmware's handler and its register dump). Fails harmlessly (no guard)
 * if the protocol is absent or vector 13 already has a registered handler;
 * the first failure is reported once on the console.
 */
EFI_STATUS gp_guard_install(void);
void gp_guard_remove(void);
/* How many faults the guard has turned into errors. */
UINTN gp_guard_hits(void);

#endif
