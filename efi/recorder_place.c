/*
 * Where the recorder region goes (docs/recorder.md, "Placement"). It must
 * survive a warm reset, so it must not lie where the next boot's firmware
 * writes. efipt cannot see the next boot, but this boot's memory map shows
 * where this boot's firmware put its data and code, and the next boot of
 * the same firmware on the same machine does the same: so only memory that
 * is free (EfiConventionalMemory) in this boot's map is taken, never below
 * 1 MiB (legacy areas), and in the middle of the largest free range: the
 * next boot's use of free memory grows from a range's ends, at the top
 * because firmware allocates from the top of free memory down (EDK2's DXE
 * core does), at the bottom because firmware writes next to its fixed
 * areas (OVMF decompresses its firmware volumes with 1 MiB of scratch just
 * above DXEFV, memory that is free again in the map by the time efipt.efi
 * runs: measured, docs/recorder.md).
 */
#include <efi.h>
#include <efilib.h>

#include "efi/console.h"
#include "efi/recorder.h"

#define PAGE 4096ull
#define LOW_LIMIT (1ull << 20)

#define DESC(map, i, dsize) ((EFI_MEMORY_DESCRIPTOR *)((UINT8 *)(map) + (i) * (dsize)))

static const char *type_name(UINT32 t)
{
	return uefi_memtype_name(t);
}

/* The free range (merged neighbours) holding [lo, hi), or false; with the
 * first map entry that is not free in the way. */
static bool free_range(EFI_MEMORY_DESCRIPTOR *map, UINTN n, UINTN dsize, uint64_t lo,
		       uint64_t hi, const EFI_MEMORY_DESCRIPTOR **block)
{
	*block = NULL;
	uint64_t at = lo;
	while (at < hi) {
		bool found = false;
		for (UINTN i = 0; i < n && !found; i++) {
			EFI_MEMORY_DESCRIPTOR *d = DESC(map, i, dsize);
			uint64_t s = d->PhysicalStart, e = s + d->NumberOfPages * PAGE;
			if (at < s || at >= e)
				continue;
			if (d->Type != EfiConventionalMemory) {
				*block = d;
				return false;
			}
			at = e;
			found = true;
		}
		if (!found)
			return false; /* a hole: no RAM there */
	}
	return true;
}

EFI_STATUS recorder_place(uint64_t size, uint64_t align, uint64_t at, uint64_t *phys,
			  struct strbuf *why)
{
	UINTN n, key, dsize;
	UINT32 dver;
	EFI_MEMORY_DESCRIPTOR *map = LibMemoryMap(&n, &key, &dsize, &dver);
	if (!map) {
		sb_puts(why, "cannot read the memory map");
		return EFI_OUT_OF_RESOURCES;
	}
	EFI_STATUS st = EFI_OUT_OF_RESOURCES;
	uint64_t best_lo = 0, best_hi = 0, pick = 0;
	if (at) {
		const EFI_MEMORY_DESCRIPTOR *b;
		if (at & (align - 1)) {
			sb_printf(why, "--recorder-at 0x%llx is not aligned to 0x%llx, as the trace "
				       "buffer at the region's start must be (SDM 33.2.7)",
				  (unsigned long long)at, (unsigned long long)align);
			st = EFI_INVALID_PARAMETER;
		} else if (at < LOW_LIMIT || at + size < at) {
			sb_printf(why, "--recorder-at 0x%llx: below 1 MiB the next boot's firmware "
				       "and legacy code write",
				  (unsigned long long)at);
			st = EFI_INVALID_PARAMETER;
		} else if (!free_range(map, n, dsize, at, at + size, &b)) {
			if (b)
				sb_printf(why, "--recorder-at 0x%llx-0x%llx: 0x%llx-0x%llx is %s in this "
					       "boot's memory map, memory this boot's firmware uses and "
					       "the next boot's will",
					  (unsigned long long)at, (unsigned long long)(at + size - 1),
					  (unsigned long long)b->PhysicalStart,
					  (unsigned long long)(b->PhysicalStart +
							       b->NumberOfPages * PAGE - 1),
					  type_name(b->Type));
			else
				sb_printf(why, "--recorder-at 0x%llx-0x%llx is not all RAM in this "
					       "boot's memory map",
					  (unsigned long long)at, (unsigned long long)(at + size - 1));
			st = EFI_INVALID_PARAMETER;
		} else {
			pick = at;
			sb_printf(why, "at 0x%llx as --recorder-at asked (free memory in this "
				       "boot's map)",
				  (unsigned long long)at);
			st = EFI_SUCCESS;
		}
	} else {
		/* the largest free range above 1 MiB that holds the region aligned */
		for (UINTN i = 0; i < n; i++) {
			EFI_MEMORY_DESCRIPTOR *d = DESC(map, i, dsize);
			if (d->Type != EfiConventionalMemory)
				continue;
			uint64_t lo = d->PhysicalStart, hi = lo + d->NumberOfPages * PAGE;
			/* merge free neighbours the map lists apart */
			for (bool grew = true; grew;) {
				grew = false;
				for (UINTN k = 0; k < n; k++) {
					EFI_MEMORY_DESCRIPTOR *e = DESC(map, k, dsize);
					uint64_t s = e->PhysicalStart, t = s + e->NumberOfPages * PAGE;
					if (e->Type == EfiConventionalMemory && s == hi) {
						hi = t;
						grew = true;
					}
					if (e->Type == EfiConventionalMemory && t == lo) {
						lo = s;
						grew = true;
					}
				}
			}
			if (hi <= LOW_LIMIT)
				continue;
			uint64_t from = lo < LOW_LIMIT ? LOW_LIMIT : lo;
			if (size > hi - from || hi - lo <= best_hi - best_lo)
				continue;
			/* the middle, aligned down; not below from */
			uint64_t a = (from + (hi - from - size) / 2) & ~(align - 1);
			if (a < from)
				a = (from + align - 1) & ~(align - 1);
			if (a < from || a > hi || size > hi - a)
				continue;
			best_lo = lo;
			best_hi = hi;
			pick = a;
			st = EFI_SUCCESS;
		}
		if (EFI_ERROR(st))
			sb_printf(why, "no free range of this boot's memory map above 1 MiB holds %llu "
				       "KiB aligned to 0x%llx (lower --size or --recorder-room)",
				  (unsigned long long)(size >> 10), (unsigned long long)align);
		else
			sb_printf(why, "the middle of the largest free range 0x%llx-0x%llx (%llu MiB) "
				       "of this boot's memory map, away from its ends, where the next "
				       "boot's firmware writes",
				  (unsigned long long)best_lo, (unsigned long long)(best_hi - 1),
				  (unsigned long long)((best_hi - best_lo) >> 20));
	}
	FreePool(map);
	if (EFI_ERROR(st))
		return st;
	EFI_PHYSICAL_ADDRESS addr = pick;
	st = uefi_call_wrapper(BS->AllocatePages, 4, AllocateAddress, EfiReservedMemoryType,
			       size / PAGE, &addr);
	if (EFI_ERROR(st)) {
		sb_reset(why);
		sb_printf(why, "AllocatePages(0x%llx, %llu pages) failed: %s", (unsigned long long)pick,
			  (unsigned long long)(size / PAGE), efi_status_name(st));
		return st;
	}
	*phys = addr;
	return EFI_SUCCESS;
}
