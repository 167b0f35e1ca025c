/*
 * Test-only UEFI application: between the trace markers, a loop that calls
 * a tiny function through a pointer, so that a third or more of the points
 * where QEMU can deliver an interrupt come right after a RET or an indirect
 * CALL (t_qemu_irq_after_branch.sh). With -icount shift=8 the firmware's
 * local APIC timer strikes dozens of times in it. Powers QEMU off through
 * isa-debug-exit after the stop marker.
 */
#include <stdint.h>

#define MARKER_START() __asm__ volatile(".byte 0x0f,0x1f,0x84,0x00,0x45,0x50,0x54,0x31")
#define MARKER_STOP() __asm__ volatile(".byte 0x0f,0x1f,0x84,0x00,0x45,0x50,0x54,0x30")

static __attribute__((noinline)) uint32_t leaf(uint32_t x)
{
	return x ^ (x >> 3);
}

uint64_t efi_main(void *image, void *systab);
uint64_t efi_main(void *image, void *systab)
{
	(void)image;
	(void)systab;
	uint32_t (*volatile call)(uint32_t) = leaf;	/* an indirect CALL each time */
	volatile uint32_t total = 0;
	MARKER_START();
	for (uint32_t i = 0; i < 200000; i++)
		total += call(i);
	MARKER_STOP();
	__asm__ volatile("outb %0, %1" : : "a"((uint8_t)0), "Nd"((uint16_t)0xf4));
	return total == 0; /* EFI_SUCCESS */
}
