/*
 * Test-only UEFI application: code that changes while traced. Between the
 * trace markers it writes a small function into a page of EfiLoaderCode
 * (from AllocatePages, before the start marker), calls it, writes another
 * function of other instruction lengths over the same bytes, calls that,
 * then writes the first back and calls it again; then it powers QEMU off
 * through isa-debug-exit. A decoder that keeps one version of the page
 * decodes one of the calls wrongly (tests/qemu/t_qemu_smc.sh).
 */
#include <stdint.h>

#define MARKER_START() __asm__ volatile(".byte 0x0f,0x1f,0x84,0x00,0x45,0x50,0x54,0x31")
#define MARKER_STOP() __asm__ volatile(".byte 0x0f,0x1f,0x84,0x00,0x45,0x50,0x54,0x30")

/* xor eax,eax; 1: inc eax; cmp eax,5; jne 1b; ret  (returns 5) */
static const uint8_t count_up[] = { 0x31, 0xc0, 0xff, 0xc0, 0x83, 0xf8, 0x05, 0x75, 0xf9, 0xc3 };
/* mov eax,10; 1: dec eax; jne 1b; add eax,7; ret  (returns 7) */
static const uint8_t count_down[] = { 0xb8, 0x0a, 0x00, 0x00, 0x00, 0xff, 0xc8, 0x75,
				      0xfc, 0x05, 0x07, 0x00, 0x00, 0x00, 0xc3 };

typedef uint32_t (*fn_t)(void);

static __attribute__((noinline)) void put(volatile uint8_t *to, const uint8_t *from, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		to[i] = from[i];
}

/* EFI_SYSTEM_TABLE.BootServices (offset 0x60), its AllocatePages (0x28) */
typedef uint64_t (__attribute__((ms_abi)) *alloc_pages_t)(uint32_t type, uint32_t mem,
							   uint64_t pages, uint64_t *addr);

uint64_t efi_main(void *image, void *systab);
uint64_t efi_main(void *image, void *systab)
{
	(void)image;
	uint8_t *bs = *(uint8_t **)((uint8_t *)systab + 0x60);
	alloc_pages_t alloc = *(alloc_pages_t *)(bs + 0x28);
	uint64_t page = 0;
	if (alloc(0 /* AllocateAnyPages */, 1 /* EfiLoaderCode */, 1, &page))
		return 1;
	volatile uint8_t *code = (volatile uint8_t *)(uintptr_t)page;
	fn_t fn = (fn_t)(uintptr_t)page;
	uint32_t sum = 0;
	MARKER_START();
	put(code, count_up, sizeof(count_up));
	sum += fn();
	put(code, count_down, sizeof(count_down));
	sum += fn();
	put(code, count_up, sizeof(count_up));
	sum += fn();
	MARKER_STOP();
	__asm__ volatile("outb %0, %1" : : "a"((uint8_t)0), "Nd"((uint16_t)0xf4));
	return sum != 17;
}
