/*
 * The flight recorder region (efipt.efi trace --recorder; docs/recorder.md):
 * one block of EfiReservedMemoryType memory that holds an Intel PT output
 * buffer and everything a decoder needs, laid out so that it can be found
 * and checked after a warm reset (efipt.efi recover) or from the OS that
 * booted (efipt recover --linux). This file is the format and its one
 * parser, shared by both: freestanding, no allocation, every read of the
 * region through a callback, every field checked before it is used.
 *
 * Region (offsets from its start; all integers little-endian):
 *
 *   0            the trace: the output regions in the order the CPU fills
 *                them (ToPA regions or the single range), aligned to their
 *                sizes (SDM 33.2.7.1, 33.2.7.2)
 *   ...          the ToPA tables (4 KiB each)
 *   header_off   the header (struct ptrec_header, 4 KiB, checksummed)
 *   ...          the sections the header lists (4 KiB aligned, each with
 *                its own CRC-32): the output layout, the loaded images and
 *                their code at arming and at ExitBootServices, the command
 *                line
 *
 * Found through a non-volatile UEFI variable (struct ptrec_var: where the
 * region is, its size, the header's offset, the generation) and, while the
 * boot that armed it lasts, a UEFI configuration table pointing at the
 * header.
 */
#ifndef EFIPT_CORE_RECORDER_H
#define EFIPT_CORE_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/cpuid_set.h"
#include "core/imgrec.h"
#include "core/strbuf.h"

/* efipt's vendor GUID: the variable's namespace (aa730c61-b6f5-41ef-870d-4e00374d9897) */
#define PTREC_VENDOR_GUID_TEXT "aa730c61-b6f5-41ef-870d-4e00374d9897"
#define PTREC_VAR_NAME "EfiptRecorder"
/* the configuration table's GUID (cac64b07-3b6b-4974-b503-7c1f81430f3c):
 * VendorTable is the header's physical address */
#define PTREC_TABLE_GUID_TEXT "cac64b07-3b6b-4974-b503-7c1f81430f3c"

#define PTREC_MAGIC "EFIPTREC"
#define PTREC_VERSION 1
#define PTREC_HEADER_BYTES 4096u
#define PTREC_MAX_SECTIONS 8u
#define PTREC_MAX_CPUID 24u
#define PTREC_MAX_TABLES 16u
#define PTREC_MAX_REGIONS 1024u
#define PTREC_MAX_SNAPSHOTS 1024u	/* code snapshots per section */
#define PTREC_MAX_IMAGES 1024u		/* image records per section */

enum ptrec_source {
	PTREC_SRC_HW = 1,	/* Intel PT wrote it */
	PTREC_SRC_SYNTHETIC = 2, /* efipt's synthesizer wrote it (no CPU did) */
	PTREC_SRC_QEMU = 3,	/* the host's QEMU plugin has the trace; none here */
};

enum ptrec_output { PTREC_OUT_SINGLE = 1, PTREC_OUT_TOPA = 2 };
enum ptrec_mode { PTREC_MODE_STOP = 1, PTREC_MODE_WRAP = 2 };

/* header flags */
#define PTREC_F_STARTED      (1u << 0) /* tracing began (hw), the trace is in (synthetic) */
#define PTREC_F_STOPPED      (1u << 1) /* efipt stopped tracing: stop_* and tsc_stop hold */
#define PTREC_F_EXIT         (1u << 2) /* ExitBootServices was signalled: tsc_exit holds */
#define PTREC_F_STOP_AT_EXIT (1u << 3) /* --recorder-stop exit */
#define PTREC_F_RETURNED     (1u << 4) /* the traced image returned to efipt.efi */
#define PTREC_F_EXIT_CUT     (1u << 5) /* the exit snapshots did not all fit */

enum ptrec_section_kind {
	PTREC_SEC_LAYOUT = 1,	   /* struct ptrec_layout_hdr, tables, regions */
	PTREC_SEC_IMAGES_ARM = 2,  /* images at arming: u32 count, u32 0, struct imgrec[] */
	PTREC_SEC_CODE_ARM = 3,	   /* their code: u32 count, u32 0, struct ptrec_snap[], bytes */
	PTREC_SEC_IMAGES_EXIT = 4, /* the same at ExitBootServices (images whose code */
	PTREC_SEC_CODE_EXIT = 5,   /* changed or that are new since arming) */
	PTREC_SEC_CMDLINE = 6,	   /* efipt.efi's command line, ASCII */
};

struct ptrec_section {
	uint32_t kind;		/* enum ptrec_section_kind */
	uint32_t crc;		/* CRC-32 of the first `used` bytes */
	uint64_t off;		/* from the region's start, 4 KiB aligned */
	uint64_t cap;		/* bytes reserved */
	uint64_t used;		/* bytes written (at most cap) */
};

struct ptrec_cpuid {
	uint32_t leaf, subleaf;
	uint32_t r[4];		/* EAX, EBX, ECX, EDX */
};

/* The header: PTREC_HEADER_BYTES at header_off (offsets in docs/recorder.md). */
struct ptrec_header {
	char magic[8];		/* PTREC_MAGIC */
	uint32_t version;	/* PTREC_VERSION */
	uint32_t header_bytes;	/* PTREC_HEADER_BYTES: what crc covers */
	uint32_t crc;		/* CRC-32 of the header with this field 0 */
	uint32_t flags;		/* PTREC_F_* */
	uint64_t generation;	/* the arming's number (the variable's too) */
	uint64_t region_phys, region_size;
	uint64_t header_off;
	uint32_t boot;		/* GetNextMonotonicCount's high half at arming */
	uint32_t source;	/* enum ptrec_source */
	uint64_t tsc_arm;	/* TSC before tracing began (synthetic: its clock) */
	uint64_t tsc_started;	/* TSC after tracing began: the first PSB+'s TSC
				 * lies in [tsc_arm, tsc_started] */
	uint64_t tsc_exit, tsc_stop;
	/* what was programmed (SDM 33.2.8) */
	uint64_t rtit_ctl;	/* IA32_RTIT_CTL with TraceEn */
	uint32_t output, mode;	/* enum ptrec_output, enum ptrec_mode */
	uint64_t trace_size;	/* bytes in all output regions */
	uint64_t msr_base, msr_mask; /* OUTPUT_BASE, OUTPUT_MASK_PTRS at start */
	uint64_t cr3_match;
	uint32_t nranges, nom_freq; /* ADDRn pairs; MSR_PLATFORM_INFO[15:8] or 0 */
	uint64_t addr_a[4], addr_b[4];
	/* read back after TraceEn was cleared (PTREC_F_STOPPED, 33.3.3) */
	uint64_t stop_base, stop_mask, stop_status;
	/* synthetic: seed, instructions walked, bytes generated in all */
	uint64_t synth_seed, synth_insns, synth_bytes;
	uint32_t nsect, ncpuid;
	struct ptrec_section sect[PTREC_MAX_SECTIONS];
	struct ptrec_cpuid cpuid[PTREC_MAX_CPUID];	/* of the arming CPU */
	char run_id[32];	/* the arming run's directory name */
	char armed_at[32];	/* RTC, YYYY-MM-DDTHH:MM:SS */
	char fw_vendor[64];
	uint32_t fw_revision, uefi_revision;
	char traced_path[256];
	uint64_t traced_base, traced_size;
	char placement[256];	/* why the region is where it is */
	char exit_note[128];	/* what the exit snapshots left out */
	uint8_t reserved[PTREC_HEADER_BYTES - 1896]; /* zero */
};

/* PTREC_SEC_LAYOUT: this, then ntab u64 table addresses, then nreg regions */
struct ptrec_layout_hdr {
	uint32_t ntab, nreg;
};
struct ptrec_region {
	uint64_t base, size;	/* physical; in fill order */
	uint32_t table, entry;	/* ToPA: its table and entry index; single: 0, 0 */
};

/* PTREC_SEC_CODE_*: after the u32 count and u32 0, count of these, then the
 * bytes each names (4 KiB aligned offsets within the section) */
struct ptrec_snap {
	uint64_t phys, size;	/* page aligned */
	uint64_t off;		/* of its bytes, from the section's start */
	uint32_t code_type;	/* EFI_MEMORY_TYPE of the image's code */
	uint32_t image;		/* index of its image record in the images section */
};

/* The UEFI variable PTREC_VAR_NAME (non-volatile, boot and runtime access). */
#define PTREC_VAR_MAGIC "EFIPTVAR"
#define PTREC_VAR_ARMED 1u
#define PTREC_VAR_RECOVERED 2u
struct ptrec_var {
	char magic[8];
	uint32_t version;	/* PTREC_VERSION */
	uint32_t state;		/* PTREC_VAR_ARMED or _RECOVERED */
	uint64_t region_phys, region_size, header_off;
	uint64_t generation;
	uint32_t boot;
	uint32_t crc;		/* CRC-32 of the variable with this field 0 */
};

/* Fill magic, version and crc. */
void ptrec_var_seal(struct ptrec_var *v);
/* Check len bytes as a variable: 0, or -1 with why. */
int ptrec_var_decode(const void *data, size_t len, struct ptrec_var *v, struct strbuf *why);

/* Fill magic, version, header_bytes and crc of h. */
void ptrec_header_seal(struct ptrec_header *h);
/* CRC-32 of a section's bytes, kept in h. */
struct ptrec_section *ptrec_section_get(struct ptrec_header *h, uint32_t kind);

/* How the region is read: len bytes at off (from the region's start) into
 * dst. 0, or -1 when they cannot be read. */
struct ptrec_reader {
	int (*read)(void *ctx, uint64_t off, void *dst, size_t len);
	void *ctx;
};

enum ptrec_status {
	PTREC_OK = 0,
	PTREC_NO_HEADER = -1,	/* no magic: memory not kept, or never written */
	PTREC_BAD_VERSION = -2,
	PTREC_BAD_CHECKSUM = -3,
	PTREC_STALE = -4,	/* an older arming's header */
	PTREC_MOVED = -5,	/* the header says another place or size */
	PTREC_BAD_LAYOUT = -6,	/* sections, tables or regions out of place */
	PTREC_BAD_SECTION = -7,	/* the layout section's CRC */
	PTREC_UNREADABLE = -8,
};
const char *ptrec_status_name(int st);

/* An opened region: caller-owned (about 40 KiB), filled by ptrec_open. */
struct ptrec {
	struct ptrec_header h;
	struct ptrec_reader rd;
	uint64_t size;				/* the region's, from the variable */
	uint32_t ntab, nreg;
	uint64_t tab[PTREC_MAX_TABLES];
	struct ptrec_region reg[PTREC_MAX_REGIONS];
	uint64_t reg_off[PTREC_MAX_REGIONS];	/* ring offset of each region */
	/* sections whose CRC held (others are not used, and said so) */
	bool sec_ok[PTREC_MAX_SECTIONS];
	/* the code directories (ARM, EXIT), checked */
	uint32_t nsnap[2];
	struct ptrec_snap snap[2][PTREC_MAX_SNAPSHOTS];
	uint8_t scratch[8192];
};

/* Only the header: read and checked as ptrec_open() does (no section is
 * read). For a quick look. */
int ptrec_peek(const struct ptrec_var *var, const struct ptrec_reader *rd,
	       struct ptrec_header *h, struct strbuf *why);

/*
 * Read and check the region var names: the header (magic, version,
 * checksum, generation, place) and every section, table and output region
 * (inside the region, not overlapping each other or the header, aligned as
 * the SDM requires); the layout section's CRC (the other sections' CRCs
 * decide whether each is used: sec_ok, notes in why). Text fields are made
 * printable ASCII. Returns PTREC_OK or a status with why.
 */
int ptrec_open(struct ptrec *r, const struct ptrec_var *var, const struct ptrec_reader *rd,
	       struct strbuf *why);

/* Every read of the region goes through here: len bytes at off, never
 * outside the region. 0, or -1. */
int ptrec_read(const struct ptrec *r, uint64_t off, void *dst, size_t len);

/* ---- the end of the trace ---------------------------------------------- */

/* The output MSRs as read after a warm reset (valid: they could be read). */
struct ptrec_msrs {
	bool valid;
	uint64_t ctl, status, base, mask;
};

enum ptrec_end_how {
	PTREC_END_STOPPED,	/* efipt stopped tracing and recorded where it ended */
	PTREC_END_MSRS,		/* the output MSRs survived the reset (checked) */
	PTREC_END_UNWRAPPED,	/* never wrapped: the trace ends where the zero fill begins */
	PTREC_END_PSB_TSC,	/* wrapped: from the newest PSB+ by its TSC */
};
const char *ptrec_end_how_name(int how);

struct ptrec_end {
	int how;		/* enum ptrec_end_how */
	bool wrapped;		/* older trace was overwritten */
	bool full;		/* stop mode: the buffer filled */
	uint64_t start, len;	/* the trace: ring offset of its oldest byte, bytes */
	uint64_t pos;		/* exact methods: where the next byte would have gone */
	uint64_t lo, hi;	/* PSB_TSC: the write position lies in [lo, hi) (ring
				 * offsets, hi may be below lo across the ring's end);
				 * the trace ends at lo, hi - lo bytes are left out */
	uint64_t newest_tsc;
	uint32_t psbs;		/* PSB+ found with a TSC */
	uint32_t tsc_inversions; /* PSB+ whose TSC is not above the one before */
	bool stopped_bit, error_bit; /* IA32_RTIT_STATUS as recorded/read */
};

/*
 * Find where the trace ends and where its oldest byte is: from the stop
 * state efipt recorded; else from the output MSRs (msrs may be NULL) if
 * they are the recorder's and agree with the trace; else from the trace
 * (33.3.7: a PSB+ carries the TSC; the newest one is the last complete
 * sync point). notes gets one line per method tried and why it was not
 * used. Returns 0, or -1 with why when no end can be found (a wrapped trace
 * without TSC packets).
 */
int ptrec_find_end(struct ptrec *r, const struct ptrec_msrs *msrs, struct ptrec_end *e,
		   struct strbuf *notes);

/* ---- what a recovered run directory holds ------------------------------- */

/* The trace bytes oldest first, as region offsets: fn(ctx, off, len) for
 * each span; a non-zero return stops. Returns that value or 0. */
int ptrec_trace_spans(const struct ptrec *r, const struct ptrec_end *e,
		      int (*fn)(void *ctx, uint64_t off, uint64_t len), void *ctx);

/* One code snapshot of the run directory (mem-<phys>.bin). */
struct ptrec_code {
	uint64_t phys, size;	/* page aligned */
	uint64_t off;		/* its bytes: region offset */
	uint32_t code_type;
	bool at_exit;		/* taken at ExitBootServices */
};

/* Snapshot i of the run directory (i from 0 while it returns true): those
 * taken at ExitBootServices, then those of arming that none of them
 * overlaps (a later snapshot of the same code wins). */
bool ptrec_code(struct ptrec *r, unsigned i, struct ptrec_code *c);

/* images.json: the images at ExitBootServices, then those of arming not
 * listed again. Returns the number listed. */
unsigned ptrec_images_json(struct ptrec *r, struct strbuf *sb);
/* memmap.json: one region per code snapshot, with its file. */
void ptrec_memmap_json(struct ptrec *r, struct strbuf *sb);
/* The CPUID leaves of the arming CPU. */
void ptrec_cpuid(const struct ptrec *r, struct cpuid_set *set);

/* What the recovering side knows about itself, for the manifest. */
struct ptrec_here {
	uint32_t boot;		/* this boot's monotonic count high half (0: unknown) */
	bool same_boot_known;	/* boot is meaningful */
	const char *reader;	/* "efipt.efi recover", "efipt recover --linux" */
	bool live;		/* read while tracing may still run (Linux) */
};

/*
 * The manifest members of a recovered run (docs/format.md): "recovered",
 * "trace", "timing", "traced_image", "traced_exit_status" when known, as
 * "key": value pairs separated by ",\n  " without a trailing separator.
 */
void ptrec_manifest_members(struct ptrec *r, const struct ptrec_end *e,
			    const struct ptrec_here *here, const char *end_notes,
			    struct strbuf *sb);

/* One line for people: "recorder of boot N (armed ..., generation G):
 * N KiB of trace at 0x...". */
void ptrec_describe(const struct ptrec *r, struct strbuf *sb);

#endif
