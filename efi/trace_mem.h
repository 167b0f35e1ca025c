/*
 * Physical memory for Intel PT output buffers in firmware (struct ptout_mem):
 * pages reserved with AllocatePages at addresses aligned to their size, as
 * ToPA regions and single-range buffers require (SDM 33.2.7.1, 33.2.7.2).
 */
#ifndef EFIPT_EFI_TRACE_MEM_H
#define EFIPT_EFI_TRACE_MEM_H

#include "arch/x86_64/pt_output.h"

/* A ptout_mem that allocates EfiReservedMemoryType pages from the memory map. */
extern const struct ptout_mem efi_trace_mem;

#endif
