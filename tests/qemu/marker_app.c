/*
 * Test-only UEFI application: a region between the trace markers
 * (docs/format.md) that does calls, returns and conditional branches, then
 * powers QEMU off through isa-debug-exit (status 1: the plugin's exit=on
 * normally ends QEMU at the stop marker, with status 0, before that).
 * It writes DEBUG lines to I/O port 0x402 the two ways firmware does:
 * OVMF's DebugLibIoPort (IoWriteFifo8: REP OUTSB) and a byte at a time
 * (OUT DX,AL). No firmware service is called.
 * Built with -DTRACED_APP (traced_app.efi) it has no markers of its own and
 * returns: efipt.efi trace --source qemu marks it from outside.
 */
#include <stdint.h>

#ifdef TRACED_APP
#define MARKER_START()
#define MARKER_STOP()
#else
#define MARKER_START() __asm__ volatile(".byte 0x0f,0x1f,0x84,0x00,0x45,0x50,0x54,0x31")
#define MARKER_STOP() __asm__ volatile(".byte 0x0f,0x1f,0x84,0x00,0x45,0x50,0x54,0x30")
#endif

static __attribute__((noinline)) uint32_t step(uint32_t x)
{
	return (x & 1) ? 3 * x + 1 : x / 2;
}

static __attribute__((noinline)) uint32_t collatz(uint32_t n)
{
	uint32_t c = 0;
	while (n != 1) {
		n = step(n);
		c++;
	}
	return c;
}

/* the debug port (QEMU's -debugcon, OVMF's PcdDebugIoPort) */
#define DEBUG_PORT 0x402

static __attribute__((noinline)) void debug_fifo(const char *s, uint64_t n)
{
	__asm__ volatile("rep outsb" : "+S"(s), "+c"(n) : "d"((uint16_t)DEBUG_PORT) : "memory");
}

static __attribute__((noinline)) void debug_byte(char c)
{
	__asm__ volatile("outb %0, %1" : : "a"(c), "d"((uint16_t)DEBUG_PORT));
}

static __attribute__((noinline)) void debug_line(uint32_t v)
{
	static const char hex[] = "0123456789abcdef";
	debug_fifo("collatz total 0x", 16);
	for (int k = 28; k >= 0; k -= 4)
		debug_byte(hex[v >> k & 15]);
	debug_byte('\n');
}

uint64_t efi_main(void *image, void *systab);
uint64_t efi_main(void *image, void *systab)
{
	(void)image;
	(void)systab;
	volatile uint32_t total = 0;
	MARKER_START();
	debug_fifo("marker app: start\n", 18);
	for (uint32_t i = 1; i < 200; i++) {
		total += collatz(i);
		if (i % 50 == 0)
			debug_line(total);
	}
	debug_fifo("marker app: done\n", 17);
	MARKER_STOP();
#ifndef TRACED_APP
	__asm__ volatile("outb %0, %1" : : "a"((uint8_t)0), "Nd"((uint16_t)0xf4));
#endif
	return total == 0; /* EFI_SUCCESS */
}
