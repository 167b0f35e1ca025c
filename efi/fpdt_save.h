/*
 * The firmware's boot-performance records (ACPI FPDT and the FBPT and S3PT
 * it points to, core/fpdt.h) saved raw into the run directory as fpdt.bin,
 * with a manifest member "fpdt" saying what was found (docs/format.md).
 */
#ifndef EFIPT_EFI_FPDT_SAVE_H
#define EFIPT_EFI_FPDT_SAVE_H

#include <efi.h>

#include "efi/run.h"

/* Find the FPDT through the ACPI 2.0 configuration table (RSDP, then XSDT
 * or RSDT), check every table against the memory map and its own length
 * before reading it, and write fpdt.bin. A firmware without an FPDT, or a
 * damaged table, is said in the manifest and is no failure: the status is
 * only that of writing the file. */
EFI_STATUS fpdt_save(struct run *run);

#endif
