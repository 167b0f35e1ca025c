/*
 * Intel PT output buffers: single-range (SDM 33.2.7.1) and ToPA (33.2.7.2)
 * layouts, and finding the trace bytes in them after tracing stopped.
 *
 * Physical memory comes from the caller through struct ptout_mem: the
 * firmware backs it with AllocatePages and direct access (identity-mapped),
 * the host and tests with a simulated memory. Nothing here touches memory
 * or the CPU directly; the region bookkeeping lives in caller-owned arrays.
 *
 * Layouts built here:
 *   single   one power-of-two region, base aligned to its size;
 *            OUTPUT_MASK_PTRS = (size - 1), OutputOffset 0. Always circular.
 *   ToPA     tables of per_table entries (default 512 = one 4 KiB page):
 *            up to per_table-1 output entries, then END pointing to the next
 *            table; the last table's END points back to the first. Regions
 *            are powers of two, 4K..128M, aligned to their size. Mode stop sets
 *            STOP on the last region; wrap sets no STOP (circular). A CPU
 *            without multi-entry ToPA (CPUID.(14H,0):ECX[1]=0) gets the
 *            single-entry form: one output entry + END back to the table.
 */
#ifndef EFIPT_ARCH_PT_OUTPUT_H
#define EFIPT_ARCH_PT_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/pt_config.h"
#include "core/strbuf.h"

struct ptout_mem {
	/* Reserve size bytes of physical memory aligned to align (both powers
	 * of two, at least 4096). Return 0 and *phys, or non-zero if none. */
	int (*alloc)(void *ctx, uint64_t size, uint64_t align, uint64_t *phys);
	void (*free)(void *ctx, uint64_t phys, uint64_t size);
	/* Store one little-endian ToPA entry. */
	void (*write64)(void *ctx, uint64_t phys, uint64_t value);
	/* Set len bytes to byte (wrap mode only: the buffer is zeroed before
	 * tracing so that a wrap can be recognised afterwards). */
	void (*fill)(void *ctx, uint64_t phys, int byte, uint64_t len);
	/* Copy len bytes out of physical memory (wrap detection). */
	void (*read)(void *ctx, uint64_t phys, void *dst, size_t len);
	void *ctx;
};

/* One output region, in the order the CPU fills them. */
struct ptout_region {
	uint64_t base, size;
	unsigned table;     /* index into ptout.tab (ToPA), 0 for single */
	unsigned entry;     /* entry index in that table */
};

struct ptout_table {
	uint64_t phys;
	unsigned first;     /* first region in ptout.reg */
	unsigned nout;      /* output entries; the END entry is entry nout */
};

struct ptout {
	enum ptcfg_output output;   /* SINGLE or TOPA */
	enum ptcfg_mode mode;       /* STOP or WRAP */
	uint64_t size;              /* bytes in all regions */
	unsigned maxphyaddr;
	bool multi;                 /* multi-entry ToPA */
	unsigned per_table;         /* ToPA entries per table incl. END (2..512) */
	struct ptout_region *reg;
	unsigned nreg, max_reg;
	struct ptout_table *tab;
	unsigned ntab, max_tab;
	uint64_t msr_base, msr_mask; /* OUTPUT_BASE, OUTPUT_MASK_PTRS to write */
};

/* Regions needed for a ToPA buffer of this size if every region gets the
 * largest size (128M); fragmentation can raise it. */
#define PTOUT_REGIONS_FOR(size) ((unsigned)(((size) + (128ull << 20) - 1) / (128ull << 20)))
/* ToPA tables needed for n regions with 512-entry tables (511 outputs each). */
#define PTOUT_TABLES_FOR(n) (((n) + 510u) / 511u + 1u)

void ptout_init(struct ptout *o, struct ptout_region *reg, unsigned max_reg,
		struct ptout_table *tab, unsigned max_tab);

/*
 * Allocate and lay out the buffer described by s (validated settings), write
 * the ToPA tables, zero the buffer in wrap mode, and set msr_base/msr_mask.
 * A region allocation that fails is retried at half the size (ToPA with
 * multiple entries only). Returns 0, or -1 with a message (nothing stays
 * allocated).
 */
int ptout_build(struct ptout *o, const struct ptcfg_settings *s, const struct ptout_mem *mem,
		struct strbuf *err);

/* Release every region and table. */
void ptout_free(struct ptout *o, const struct ptout_mem *mem);

/* The 64-bit value of entry i of table t as written (i == nout: END). */
uint64_t ptout_entry(const struct ptout *o, unsigned t, unsigned i);

/* Where the trace is, after tracing stopped (33.3.2.2). */
struct ptout_extent {
	uint64_t bytes;      /* trace bytes, all spans together */
	unsigned spans;      /* spans reported */
	bool wrapped;        /* older trace was overwritten: the trace starts mid-stream */
	bool full;           /* stop mode: the buffer filled up (ToPA STOP) */
	bool stopped, error; /* IA32_RTIT_STATUS.Stopped / .Error */
	bool bad_pointer;    /* OUTPUT_BASE/MASK_PTRS point nowhere in this layout */
};

/* Receives the trace spans oldest first; return non-zero to stop early. */
typedef int (*ptout_span_fn)(void *ctx, uint64_t phys, uint64_t len);

/*
 * Compute which physical bytes hold trace, oldest first, from the output MSR
 * values read after TraceEn was cleared (base, mask) and IA32_RTIT_STATUS.
 *
 * Wrap: the MSRs only give the write position, not whether the buffer went
 * round. In wrap mode ptout_build zeroes the buffer, so if any byte from
 * the write position to the end of the buffer is non-zero the CPU wrote
 * there, i.e. it wrapped, and the trace is [position, end) + [start,
 * position). A wrapped tail that is all zero would be PAD packets only
 * (PAD is 00H), so reporting "not wrapped" then loses no information.
 * Stop mode never wraps. A ToPA STOP leaves OutputOffset at size - 1 for a
 * region that is full (33.2.7.2 "ToPA STOP"): with Stopped set and the
 * pointer on the STOP entry that offset counts as the whole region.
 * Wrap detection needs mem->read (and mem->fill at build time); without
 * them a wrap-mode buffer is reported as not wrapped. A single-range
 * OutputOffset beyond the mask counts as wrapped and is taken modulo the size.
 * Returns 0, or -1 if the MSRs do not point into this layout.
 */
int ptout_extract(const struct ptout *o, uint64_t base, uint64_t mask, uint64_t status,
		  const struct ptout_mem *mem, ptout_span_fn fn, void *ctx,
		  struct ptout_extent *ext);

/*
 * The offset in the buffer, counted over its regions in order, of the next
 * byte the output MSRs (read after TraceEn was cleared) say the CPU writes:
 * in stop mode, and in wrap mode until the buffer first goes round, the
 * byte offset in the trace file of the first packet after that point.
 * Returns 0, or -1 if the MSRs do not point into this layout.
 */
int ptout_position(const struct ptout *o, uint64_t base, uint64_t mask, uint64_t status,
		   uint64_t *pos);

#endif
