/* Aligned physical allocations for trace buffers; see trace_mem.h. */
#include <efi.h>
#include <efilib.h>

#include "efi/trace_mem.h"

/*
 * AllocatePages only promises 4 KiB alignment, so look for a free range
 * that holds an aligned block in the memory map and claim exactly that block
 * with AllocateAddress. Highest addresses first: low memory is where legacy
 * structures and small firmware allocations live. Reserved memory type, so
 * an OS never reuses a buffer the CPU might still write to.
 */
static int alloc_aligned(void *ctx, uint64_t size, uint64_t align, uint64_t *phys)
{
	(void)ctx;
	UINTN n, key, dsize;
	UINT32 dver;
	EFI_MEMORY_DESCRIPTOR *map = LibMemoryMap(&n, &key, &dsize, &dver);
	if (!map)
		return -1;
	int rc = -1;
	for (UINTN k = n; k-- > 0 && rc;) {
		EFI_MEMORY_DESCRIPTOR *d = (EFI_MEMORY_DESCRIPTOR *)((UINT8 *)map + k * dsize);
		if (d->Type != EfiConventionalMemory)
			continue;
		uint64_t start = d->PhysicalStart, end = start + d->NumberOfPages * 4096ull;
		if (end < size)
			continue;
		uint64_t at = (end - size) & ~(align - 1); /* highest aligned fit */
		if (at < start)
			continue;
		EFI_PHYSICAL_ADDRESS addr = at;
		EFI_STATUS st = uefi_call_wrapper(BS->AllocatePages, 4, AllocateAddress,
						  EfiReservedMemoryType, size / 4096, &addr);
		if (!EFI_ERROR(st)) {
			*phys = addr;
			rc = 0;
		}
	}
	FreePool(map);
	return rc;
}

static void free_pages(void *ctx, uint64_t phys, uint64_t size)
{
	(void)ctx;
	uefi_call_wrapper(BS->FreePages, 2, (EFI_PHYSICAL_ADDRESS)phys, size / 4096);
}

/* Firmware runs identity-mapped: a physical address is a pointer. */
static void write64(void *ctx, uint64_t phys, uint64_t value)
{
	(void)ctx;
	*(volatile uint64_t *)(UINTN)phys = value;
}

static void fill(void *ctx, uint64_t phys, int byte, uint64_t len)
{
	(void)ctx;
	SetMem((void *)(UINTN)phys, len, (UINT8)byte);
}

static void read_phys(void *ctx, uint64_t phys, void *dst, size_t len)
{
	(void)ctx;
	CopyMem(dst, (void *)(UINTN)phys, len);
}

const struct ptout_mem efi_trace_mem = {
	.alloc = alloc_aligned,
	.free = free_pages,
	.write64 = write64,
	.fill = fill,
	.read = read_phys,
	.ctx = 0,
};
