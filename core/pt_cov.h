/*
 * Block coverage of the code a trace executed, per image, and the drcov
 * file that disassemblers read (IDA's Lighthouse, Binary Ninja's bncov and
 * Lightkeeper, Ghidra's Cartographer; docs/coverage.md).
 *
 * Streaming and bounded: each image has three bitmaps over its range, one
 * bit per byte (the caller's memory, ptcov_bits_size() bytes): instruction
 * starts, bytes of executed instructions, and block heads (where a run of
 * the flow decoder began: a branch target, a resume point). Memory does not
 * grow with the trace. An image without bitmaps only counts instructions.
 *
 * Blocks are the executed byte ranges cut at heads and at 65535 bytes (the
 * drcov size field), so every executed instruction lies inside a block.
 *
 * Freestanding: no allocation, no globals.
 */
#ifndef EFIPT_CORE_PT_COV_H
#define EFIPT_CORE_PT_COV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/pt_flow.h"
#include "core/pt_image.h"
#include "core/strbuf.h"

#define PTCOV_PATH_MAX 256
#define PTCOV_BLOCK_MAX 65535u	/* drcov: u16 size */

struct ptcov_image {
	uint64_t base, size;	/* the image's range; must fit below 2^64 */
	uint64_t entry;		/* entry point address (0: unknown) */
	uint64_t code_size;	/* bytes in executable sections (0: unknown) */
	char path[PTCOV_PATH_MAX]; /* module path in drcov ("DxeCore.efi") */
	uint8_t *bits;		/* ptcov_bits_size(size) bytes, or NULL */
	uint64_t execs;		/* instructions executed in it, repeats counted */
	uint64_t lost;		/* of those, not recorded (no bitmaps) */
};

/* A block whose bits are all set already: blocks from the same ip and
 * mode decode alike, so one of at most size bytes sets nothing new. Every
 * such block lies wholly in what image img owns (its stretch then needs
 * no lookup). */
struct ptcov_seen {
	uint64_t ip;
	uint16_t size;
	uint8_t mode;
	uint8_t ways;		/* PTCOV_*: the block's branch went so (size
				 * is the block's) */
	uint32_t img;		/* index in ptcov.img */
};

/* Ways a conditional branch went (ptcov.on_branch). */
enum { PTCOV_RAN = 1, PTCOV_TAKEN = 2, PTCOV_FELL = 4 };

struct ptcov {
	struct ptcov_image *img; /* caller's array, sorted by ptcov_init */
	unsigned nimg;
	unsigned last;		/* the image of the last hit (runs cluster) */
	int overlap;		/* some images overlap (ptimg_list_sort()) */
	uint64_t insns;		/* every instruction delivered */
	uint64_t outside;	/* those in no image */
	/* ptcov_on_blocks(): the last owner looked up (span_k, -1: none) of
	 * [span_lo, span_hi] (span_set: there is one) */
	uint64_t span_lo, span_hi;
	int span_k;
	bool span_set;
	/* set by ptcov_use_blocks() */
	struct ptcov_seen *seen;
	uint32_t seen_mask;
	/* ptcov_on_blocks(): conditional branches (Jcc, J*CXZ, LOOP*) that
	 * ran, by the address after them, and which ways they went
	 * (PTCOV_*: taken, fell through; neither when an event came first).
	 * Given at least once per way, not each time (NULL: none). */
	void (*on_branch)(void *ctx, uint64_t end, uint8_t ways);
	void *branch_ctx;
};

/* Bytes of bitmaps for an image of size bytes (3 bits per byte). */
static inline uint64_t ptcov_bits_size(uint64_t size)
{
	return 3 * ((size >> 3) + ((size & 7) != 0));
}

/* Set path to name, with ".efi" added when name has no extension (the
 * summary's names are debug-file base names: "DxeCore"). */
void ptcov_set_name(struct ptcov_image *m, const char *name);

/*
 * Read the PE headers of the image at m->base through img: the entry point
 * and the bytes of its executable sections (code_size). Leaves both as they
 * are when the headers cannot be read or make no sense.
 */
void ptcov_read_pe(struct ptcov_image *m, const struct ptimg *img);

/* img[0..n) need base, size, path and bits (bits are cleared); counts are
 * reset; an image whose range runs past 2^64 gets size 0. Sorts by base;
 * where images overlap, an address is covered in the one that starts last
 * (a nested image: core/pt_image.h). */
void ptcov_init(struct ptcov *c, struct ptcov_image *img, unsigned n);

/* ptflow_sink run callback: pass c as ctx. */
void ptcov_on_run(void *c, const struct ptflow_run *run);

/*
 * The same coverage from blocks (ptflow_on_blocks(dec, ptcov_on_blocks)):
 * the fast way. A block not marked before is marked by instruction (the
 * lengths from its batch's code); seen (nseen entries, a power of two, or
 * NULL/0: none) remembers the blocks marked, so that a block executed
 * again costs no decoding. Call after ptcov_init(); clears seen.
 */
void ptcov_use_blocks(struct ptcov *c, struct ptcov_seen *seen, uint32_t nseen);
void ptcov_on_blocks(void *c, const struct ptflow_batch *batch);

/* Record len bytes at offset off of m as covered, with a head at off if
 * head, and an instruction start at off if insn. Parts past the image are
 * cut off. */
void ptcov_mark(struct ptcov_image *m, uint64_t off, uint64_t len, bool head, bool insn);

/* Whether an executed instruction starts at offset off of m. */
bool ptcov_insn_at(const struct ptcov_image *m, uint64_t off);

struct ptcov_stat {
	uint64_t insns;		/* distinct instructions executed */
	uint64_t bytes;		/* bytes of them */
	uint64_t blocks;	/* blocks (cut at heads, not at 65535 bytes) */
};
void ptcov_image_stat(const struct ptcov_image *m, struct ptcov_stat *st);

/*
 * Iterate over m's drcov blocks in address order: *pos starts at 0; returns
 * false at the end. off and size are relative to m->base.
 */
bool ptcov_next_block(const struct ptcov_image *m, uint64_t *pos, uint32_t *off,
		      uint16_t *size);

/* drcov blocks in all images. */
uint64_t ptcov_drcov_blocks(const struct ptcov *c);

/*
 * A module path as a drcov module line holds it: control characters (a
 * newline would end the line, an escape drive a terminal) and the comma
 * of ", " (the column separator Lighthouse splits at) become '?'.
 */
void ptcov_drcov_path(struct strbuf *sb, const char *path);

/*
 * Write the drcov version 2 file: text header (module table: one module per
 * image, id = index in c->img) and the binary block table. put gets it in
 * pieces, in order. Returns the number of bytes given to put. Module paths
 * are written by ptcov_drcov_path().
 */
uint64_t ptcov_drcov_write(const struct ptcov *c, const char *flavor,
			   void (*put)(void *ctx, const void *p, size_t n), void *ctx);

#endif
