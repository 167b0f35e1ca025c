/*
 * codechanges.bin (docs/format.md): code that changed at an address while
 * it was traced (memory freed by one image and reused by another, code
 * decompressed or relocated, code that rewrites itself), each change with
 * the position in the trace from which the new bytes are the code there.
 * The code snapshots hold the first bytes seen at every address; a decoder
 * applies each change when it reaches its position (ptflow_on_position()).
 *
 *   header: "EFIPTCC1" (8 bytes), record size (u32 LE, 40), 0 (u32)
 *   record: pos (u64: the byte offset in CPU cpu's trace file of the first
 *           packet after the change), addr (u64, linear), cpu (u16),
 *           len (u8, 1..16), flags (u8), by (u16), 2 bytes 0, bytes (16:
 *           the first len are the new code at addr)
 *
 * Code one CPU changes is changed for every CPU: a record with
 * CODECHG_OTHER_CPU is where CPU cpu's trace takes up a change that CPU by
 * ran first (the plugin copies each change into every other CPU's trace at
 * that CPU's next instruction). The records of one CPU come in the order
 * of pos. The file is untrusted
 * input: every field is checked before use.
 */
#ifndef EFIPT_CORE_CODECHG_H
#define EFIPT_CORE_CODECHG_H

#include <stddef.h>
#include <stdint.h>

#define CODECHG_MAGIC "EFIPTCC1"
#define CODECHG_HEADER 16u
#define CODECHG_RECORD 40u
#define CODECHG_MAX_LEN 16u
#define CODECHG_OTHER_CPU 1u	/* flags: CPU by ran the new code first */

struct codechg {
	uint64_t pos;
	uint64_t addr;
	uint16_t cpu;
	uint8_t len;
	uint8_t flags;		/* CODECHG_OTHER_CPU */
	uint16_t by;		/* the CPU that ran it first (cpu without the flag) */
	uint8_t bytes[CODECHG_MAX_LEN];
};

/* The header into out[CODECHG_HEADER]. */
void codechg_header(uint8_t *out);
/* Record c into out[CODECHG_RECORD]. */
void codechg_put(uint8_t *out, const struct codechg *c);

/*
 * Check the file buf[0..size): its header, and that it holds whole
 * records. Returns the number of records, or -1 with *why (static text)
 * and *at (the file offset where it is wrong).
 */
long codechg_check(const uint8_t *buf, size_t size, const char **why, uint64_t *at);
/* Record i of a checked file into *c. Returns 0, or -1 with *why (a
 * length of 0 or above 16, code that would wrap around 2^64, unknown
 * flags). Files without flags (older runs) read as by = cpu. */
int codechg_get(const uint8_t *buf, size_t size, size_t i, struct codechg *c, const char **why);

#endif
