/* Decoding a trace inside firmware with the core flow decoder, code read
 * through a memview (live code regions and copies). */
#ifndef EFIPT_EFI_INPLACE_H
#define EFIPT_EFI_INPLACE_H

#include <efi.h>
#include <stdbool.h>

#include "core/flow_setup.h"
#include "core/memview.h"
#include "core/pt_caps.h"
#include "core/pt_flow.h"

/*
 * Decode trace[0..len) with dec (caller's, several KiB) and feed sink, and
 * on_blocks if not NULL (ptflow_on_blocks(): the fast way to see every
 * instruction); counted: on_blocks needs no order and takes them counted
 * (ptflow_blocks_counted(), when the pool has room for the counts).
 * Errata come from the CPU signature; rtit_ctl says how the trace was
 * recorded (DisTNT, DisRETC; core/flow_setup.h). stat receives the
 * decoder's counters. Returns EFI_OUT_OF_RESOURCES if the block cache
 * cannot be had.
 */
EFI_STATUS inplace_decode(const uint8_t *trace, uint64_t len, struct memview *view,
			  const struct ptcaps *caps, uint64_t rtit_ctl,
			  struct ptflow_decoder *dec, const struct ptflow_sink *sink,
			  ptflow_blocks_fn on_blocks, bool counted, struct ptflow_stat *stat);

#endif
