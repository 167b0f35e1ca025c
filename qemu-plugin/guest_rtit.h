/*
 * pt=guest: the Intel PT unit of one vCPU as the guest programs it with its
 * own WRMSRs (docs/qemu.md "PT that follows the guest"). QEMU's TCG ignores
 * writes to the IA32_RTIT_* MSRs and reads them as 0; this keeps the state
 * a CPU with the profile's capabilities would have, through the same rules
 * as the host tests' model (core/pt_unit.h): a write that would #GP is
 * reported and changes nothing, operational errors set STATUS.Error. The
 * packet bytes go where the guest's programming says: single-range or the
 * ToPA chain read from guest memory. QEMU 10.0's plugins cannot write guest
 * memory, so the bytes of each output region go to a host file laid out as
 * those regions (guest-output.bin: each region once, in the order the
 * output first reached it), described with the final write position in
 * the manifest's trace.guest.
 */
#ifndef EFIPT_PLUGIN_GUEST_RTIT_H
#define EFIPT_PLUGIN_GUEST_RTIT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/pt_unit.h"
#include "core/strbuf.h"

#define GRTIT_MAX_REGIONS 4096		/* regions recorded in the file */
#define GRTIT_MAX_FILE (1ull << 30)	/* the region file's most bytes */

struct grtit_region {
	uint64_t table;		/* ToPA table (single-range: the base) */
	unsigned idx;		/* its entry */
	uint64_t base, size;	/* guest physical */
	uint64_t file_off;	/* where the region starts in the file */
	uint64_t written;	/* bytes the output wrote into it */
};

struct grtit {
	struct ptunit u;
	struct ptunit_mem mem;
	unsigned cpu;
	FILE *out;		/* guest-output.bin (shared by the vCPUs' regions) */
	uint64_t *out_size;	/* its size so far (shared) */
	struct grtit_region *reg;
	unsigned nreg;
	unsigned cur;		/* the region the output is in (nreg: none) */
	uint64_t regions_dropped;	/* past GRTIT_MAX_REGIONS / _FILE */
	uint64_t writes, gp, operr, no_trigger, emitted;
	uint64_t unread;	/* ToPA entries guest memory could not give */
	bool branch_off_noted, stop_noted;
	/* QEMU is exiting: no vCPU to read guest memory through (QEMU asserts
	 * a current CPU); a ToPA entry not yet read is then not in memory */
	bool no_memory;
};

/* caps: the emulated unit's (ptcaps_emulate()); out, out_size: the shared
 * region file. */
bool grtit_init(struct grtit *g, const struct ptcaps *caps, unsigned cpu, FILE *out,
		uint64_t *out_size);

enum grtit_edge { GRTIT_NONE, GRTIT_ON, GRTIT_OFF };

/* The guest executes WRMSR (ECX msr, EDX:EAX v) at ip. Another MSR than the
 * unit's: GRTIT_NONE, nothing recorded. Otherwise the write is applied as
 * the CPU would (line: one JSON line for rtit.jsonl; msg: a line for the
 * user where hardware would #GP or report an error, else empty) and the
 * TraceEn edge it makes is returned: ON only with TriggerEn set. */
enum grtit_edge grtit_wrmsr(struct grtit *g, uint64_t ip, uint32_t msr, uint64_t v,
			    struct strbuf *line, struct strbuf *msg);

/* n packet bytes from the generator: into the output while triggered.
 * Returns how many the unit took (fewer: Stopped or Error). msg says why
 * where the output met an error, also when the bytes filled a region
 * exactly and the next entry is in error (all taken, Error set). */
size_t grtit_emit(struct grtit *g, const uint8_t *b, size_t n, struct strbuf *msg);

/* The manifest's trace.guest object: MSRs now, counts, the regions and
 * the final write position. */
void grtit_json(const struct grtit *g, struct strbuf *out);

void grtit_free(struct grtit *g);

#endif
