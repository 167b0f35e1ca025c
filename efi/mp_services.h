/*
 * The application processors through EFI_MP_SERVICES_PROTOCOL (UEFI PI
 * spec, volume 2, "MP Services Protocol"), which gnu-efi does not declare:
 * how many CPUs, which one this is, each one's APIC ID and location, and
 * running a function on one of them (StartupThisAP, blocking).
 */
#ifndef EFIPT_EFI_MP_SERVICES_H
#define EFIPT_EFI_MP_SERVICES_H

#include <efi.h>

#include "core/strbuf.h"

struct mp_cpu {
	UINTN number;			/* MP services' processor number */
	UINT64 apic_id;			/* ProcessorId */
	UINT32 status;			/* StatusFlag: MP_CPU_BSP, MP_CPU_ENABLED, MP_CPU_HEALTHY */
	UINT32 package, core, thread;	/* Location */
};

#define MP_CPU_BSP 0x1u
#define MP_CPU_ENABLED 0x2u
#define MP_CPU_HEALTHY 0x4u

/* How long an AP may take to run one of efipt's procedures. */
#define MP_TIMEOUT_US 2000000u

/*
 * Find the protocol. EFI_NOT_FOUND (why names the protocol and its GUID)
 * on a firmware without it.
 */
EFI_STATUS mp_open(struct strbuf *why);

/* Processors in total and enabled; this CPU's number (the BSP's). */
EFI_STATUS mp_count(UINTN *all, UINTN *enabled);
EFI_STATUS mp_self(UINTN *number);
EFI_STATUS mp_info(UINTN number, struct mp_cpu *cpu);

/*
 * Run fn(arg) on processor number and wait for it (at most MP_TIMEOUT_US);
 * on this CPU itself, call it. fn must not call boot services.
 */
EFI_STATUS mp_run(UINTN number, void (*fn)(void *arg), void *arg);

#endif
