/*
 * Test-only UEFI application: between the trace markers, a loop of
 * conditional branches, half of them taken, so that every point where
 * QEMU can deliver an interrupt in it comes right after a Jcc
 * (t_qemu_irq_after_jcc.sh). With -icount shift=8 the firmware's local
 * APIC timer strikes dozens of times in it. Powers QEMU off through
 * isa-debug-exit after the stop marker.
 */
#include <stdint.h>

#define MARKER_START() __asm__ volatile(".byte 0x0f,0x1f,0x84,0x00,0x45,0x50,0x54,0x31")
#define MARKER_STOP() __asm__ volatile(".byte 0x0f,0x1f,0x84,0x00,0x45,0x50,0x54,0x30")

uint64_t efi_main(void *image, void *systab);
uint64_t efi_main(void *image, void *systab)
{
	(void)image;
	(void)systab;
	MARKER_START();
	/* bit 0 of the count: the JZ taken every other time, bit 1: the JNZ;
	 * the loop's own JNZ taken but once */
	__asm__ volatile("mov $300000, %%ecx\n"
			 "1: test $1, %%ecx\n"
			 "jz 2f\n"
			 "nop\n"
			 "2: test $2, %%ecx\n"
			 "jnz 3f\n"
			 "nop\n"
			 "3: dec %%ecx\n"
			 "jnz 1b\n"
			 :
			 :
			 : "ecx", "cc");
	MARKER_STOP();
	__asm__ volatile("outb %0, %1" : : "a"((uint8_t)0), "Nd"((uint16_t)0xf4));
	return 0; /* EFI_SUCCESS */
}
