/*
 * What the plugin knows of one translated instruction: its linear address,
 * bytes, and what core/x86_insn.h makes of them in each code size. QEMU 7.2
 * tells a plugin neither the code size nor the CS base, so the bytes are
 * decoded in all three sizes and the sizes whose length agrees with QEMU's
 * are kept (infer.c chooses among them per block).
 */
#ifndef EFIPT_PLUGIN_INSN_INFO_H
#define EFIPT_PLUGIN_INSN_INFO_H

#include <stdbool.h>
#include <stdint.h>

#include "core/x86_insn.h"

/* The 8-byte NOPs (nopl 0x..(%eax,%eax,1) with displacement "EPT1"/"EPT0")
 * that start and stop tracing when the plugin runs with start=/stop=marker. */
#define PINSN_MARKER_LEN 8
extern const uint8_t pinsn_marker_start[PINSN_MARKER_LEN];
extern const uint8_t pinsn_marker_stop[PINSN_MARKER_LEN];

enum pinsn_flag {
	PINSN_START = 1,	/* the start marker */
	PINSN_STOP = 2,		/* the stop marker */
	PINSN_SEEN = 4,		/* its bytes are in the code map */
	PINSN_FIRST = 16,	/* the first of its translated block */
	PINSN_FAR32 = 8,	/* in 16-bit code: a far JMP/CALL with a 32-bit
				 * offset (66h), the way real-mode code enters
				 * 32-bit protected mode */
	PINSN_MOV_CR0 = 32,	/* MOV CR0, r (0F 22 /0): with a far JMP
				 * right after it, how 32-bit code enters
				 * long mode (infer.c choose_mode()) */
};

/* Bit m of modes: the bytes decode to QEMU's length in enum x86_mode m. */
#define PINSN_MODE_BIT(m) (1u << (m))

struct pinsn {
	uint64_t addr;		/* linear */
	uint8_t len;		/* QEMU's length, 1..15 */
	uint8_t modes;		/* PINSN_MODE_BIT()s of the block it is in */
	uint8_t flags;		/* enum pinsn_flag */
	uint8_t iclass[3];	/* enum x86_iclass per enum x86_mode */
	bool zero_len_call[3];
	uint16_t seen_run;	/* the next seen_run - 1 are PINSN_SEEN (infer.c) */
	uint64_t target[3];	/* direct branch target per mode */
	uint8_t bytes[16];
};

/* Fill p from QEMU's view of one instruction; returns the PINSN_MODE_BIT()s
 * it is consistent with (0: none: an encoding x86_insn.h does not know). */
unsigned pinsn_init(struct pinsn *p, uint64_t addr, const uint8_t *bytes, unsigned len);

#endif
