/* In-place decoding; see inplace.h. */
#include <efi.h>
#include <efilib.h>

#include "efi/inplace.h"

#define CACHE_ENTRIES 4096 /* a power of two; blocks of firmware-sized code */

EFI_STATUS inplace_decode(const uint8_t *trace, uint64_t len, struct memview *view,
			  const struct ptcaps *caps, bool distnt, bool disretc,
			  const struct ptflow_sink *sink, struct ptflow_stat *stat)
{
	static struct ptflow_decoder dec; /* several KiB: not on the stack */
	struct ptflow_block *cache = AllocatePool(CACHE_ENTRIES * sizeof(*cache));
	if (!cache)
		return EFI_OUT_OF_RESOURCES;
	struct ptflow_config fc = { 0 };
	fc.image.read = memview_read;
	fc.image.ctx = view;
	fc.cache = cache;
	fc.cache_size = CACHE_ENTRIES;
	fc.errata = ptflow_errata_for_cpu(caps->family, caps->model, (int)caps->stepping);
	fc.distnt = distnt;
	fc.disretc = disretc;
	EFI_STATUS st = EFI_INVALID_PARAMETER;
	if (ptflow_init(&dec, &fc, sink) == 0) {
		ptflow_decode(&dec, trace, len, 0);
		*stat = dec.stat;
		st = EFI_SUCCESS;
	}
	FreePool(cache);
	return st;
}
