/*
 * The trace markers (docs/format.md): two 8-byte NOPs, `nopl` with the
 * displacement "EPT1" (start) and "EPT0" (stop). Any x86 CPU executes them
 * as NOPs (SDM Vol. 2B, NOP: 0F 1F /0 is the recommended multi-byte form);
 * an emulator that watches for them (efipt-qemu.so's start=marker and
 * stop=marker) traces exactly the code between them.
 */
#ifndef EFIPT_ARCH_TRACE_MARKER_H
#define EFIPT_ARCH_TRACE_MARKER_H

/* the 8 bytes, for tools that look for them in code */
#define TRACE_MARKER_START_BYTES 0x0f, 0x1f, 0x84, 0x00, 0x45, 0x50, 0x54, 0x31
#define TRACE_MARKER_STOP_BYTES 0x0f, 0x1f, 0x84, 0x00, 0x45, 0x50, 0x54, 0x30

/* inline, so that nothing of the caller runs between marker and traced code */
static inline __attribute__((always_inline)) void trace_marker_start(void)
{
	__asm__ volatile(".byte 0x0f,0x1f,0x84,0x00,0x45,0x50,0x54,0x31" ::: "memory");
}

static inline __attribute__((always_inline)) void trace_marker_stop(void)
{
	__asm__ volatile(".byte 0x0f,0x1f,0x84,0x00,0x45,0x50,0x54,0x30" ::: "memory");
}

#endif
