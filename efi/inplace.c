/* In-place decoding; see inplace.h. */
#include <efi.h>
#include <efilib.h>

#include "efi/inplace.h"

/* Cache entries (32 bytes each, a power of two): 1 MiB holds the blocks of
 * a whole boot's drivers; less if the pool is short (a full cache starts
 * over, which is slower, not wrong). */
#define CACHE_MAX 32768
#define CACHE_MIN 1024

EFI_STATUS inplace_decode(const uint8_t *trace, uint64_t len, struct memview *view,
			  const struct ptcaps *caps, uint64_t rtit_ctl,
			  struct ptflow_decoder *dec, const struct ptflow_sink *sink,
			  ptflow_blocks_fn on_blocks, bool counted, struct ptflow_stat *stat)
{
	uint32_t entries = CACHE_MAX;
	struct ptflow_block *cache;
	while (!(cache = AllocatePool(entries * sizeof(*cache))) && entries > CACHE_MIN)
		entries /= 2;
	if (!cache)
		return EFI_OUT_OF_RESOURCES;
	struct ptflow_config fc = { 0 };
	fc.image.read = memview_read;
	fc.image.ctx = view;
	fc.cache = cache;
	fc.cache_size = entries;
	struct flow_facts facts;
	flow_facts_from_caps(&facts, caps, rtit_ctl);
	flow_setup(&fc, &facts);
	/* two counters per entry; without them the blocks come one by one
	 * (slower, the same result) */
	uint64_t *counts = on_blocks && counted
				   ? AllocateZeroPool(2 * (UINTN)entries * sizeof(*counts))
				   : NULL;
	EFI_STATUS st = EFI_INVALID_PARAMETER;
	if (ptflow_init(dec, &fc, sink) == 0) {
		ptflow_on_blocks(dec, on_blocks);
		ptflow_blocks_counted(dec, counts);
		ptflow_decode(dec, trace, len, 0);
		*stat = dec->stat;
		st = EFI_SUCCESS;
	}
	if (counts)
		FreePool(counts);
	FreePool(cache);
	return st;
}
