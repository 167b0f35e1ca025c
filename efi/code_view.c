/* Firmware code regions for the in-place decoder; see code_view.h. */
#include <efi.h>
#include <efilib.h>

#include "efi/code_view.h"

EFI_STATUS code_view_add_code_regions(struct memview *v)
{
	UINTN n, key, dsize;
	UINT32 dver;
	EFI_MEMORY_DESCRIPTOR *map = LibMemoryMap(&n, &key, &dsize, &dver);
	if (!map)
		return EFI_OUT_OF_RESOURCES;
	for (UINTN i = 0; i < n; i++) {
		EFI_MEMORY_DESCRIPTOR *d = (EFI_MEMORY_DESCRIPTOR *)((UINT8 *)map + i * dsize);
		if (d->Type == EfiLoaderCode || d->Type == EfiBootServicesCode ||
		    d->Type == EfiRuntimeServicesCode)
			memview_add(v, d->PhysicalStart, d->NumberOfPages * 4096ull,
				    (const void *)(UINTN)d->PhysicalStart);
	}
	FreePool(map);
	return EFI_SUCCESS;
}
