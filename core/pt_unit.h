/*
 * An Intel PT unit as software sees it (SDM Vol. 3C 33.2.7, 33.2.8,
 * 33.3.10): the IA32_RTIT_* MSRs of one logical processor, which accesses
 * raise #GP, what TraceEn 0 -> 1 checks, and where the packet bytes go
 * (single-range output, ToPA tables) until a STOP region fills or an
 * operational error stops them. The rules are written here once for
 * every emulation of the unit: the PT model of the host tests
 * (tests/lib/pt_model.c) and efipt-qemu.so following a guest's own
 * programming (qemu-plugin/guest_rtit.c). Memory goes through callbacks.
 *
 * #GP (the access does not happen; ptunit_rdmsr/ptunit_wrmsr return
 * PTUNIT_GP and say the rule):
 *   - an IA32_RTIT_* MSR CPUID does not enumerate (Table 33-11, 33.2.8.1);
 *     another MSR (not the unit's)
 *   - IA32_RTIT_CTL: reserved bits; a feature bit whose CPUID bit is 0;
 *     MTCFreq/CycThresh/PSBFreq encodings not in the CPUID bitmaps;
 *     ADDRn_CFG > 2 or for a range not enumerated; TraceEn with ToPA=0 and
 *     FabricEn=0 and no single-range output; any change while TraceEn=1
 *     except one clearing TraceEn (33.2.8.3); BranchEn=0 with TraceEn=1 on
 *     Broadwell (erratum BDM106)
 *   - IA32_RTIT_STATUS: reserved bits, PendPSB/PendTopaPMI without PMI
 *     preservation, PacketByteCnt without configurable PSB
 *   - OUTPUT_BASE: bits 6:0 or at/above MAXPHYADDR; CR3_MATCH bits 4:0;
 *     a non-canonical ADDRn; any configuration MSR while TraceEn=1
 * Operational errors (STATUS.Error set, TriggerEn cleared, no more bytes):
 *   - single-range, at TraceEn 0 -> 1 (33.2.7.1): a mask that is not
 *     contiguous, a base with bits of the mask set, OutputOffset > mask
 *   - ToPA, when the output reaches the entry (33.2.7.2 "ToPA Errors"):
 *     a table base not 4K aligned; reserved bits (those at or above
 *     MAXPHYADDR too); a region not aligned to its size; END with STOP or
 *     INT; END in entry 0; OutputOffset >= the region's size; with one
 *     output region only (MENTRY=0), an entry 1 that is no END back to the
 *     table; an entry the memory cannot give
 * TraceEn set while STATUS.Error or Stopped is set leaves TriggerEn clear:
 * nothing is traced (33.2.6.2).
 */
#ifndef EFIPT_CORE_PT_UNIT_H
#define EFIPT_CORE_PT_UNIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/pt_caps.h"
#include "core/strbuf.h"

#define PTUNIT_RANGES 8	/* CPUID.(14H,1):EAX[2:0] is at most 7 */

struct ptunit_mem {
	/* The 8-byte ToPA entry at phys; false: no memory there. */
	bool (*read64)(void *ctx, uint64_t phys, uint64_t *v);
	/* n trace bytes to phys (never across the region's end). */
	void (*write)(void *ctx, uint64_t phys, const uint8_t *b, size_t n);
	/* Optional: output now goes to region [base, base+size) from offset
	 * off, ToPA entry idx of table (single-range: table is the base). */
	void (*region)(void *ctx, uint64_t table, unsigned idx, uint64_t base, uint64_t size,
		       uint64_t off, uint64_t entry);
	void *ctx;
};

struct ptunit {
	struct ptcaps caps;
	uint64_t ctl, status, base, mask, cr3;
	uint64_t addr_a[PTUNIT_RANGES], addr_b[PTUNIT_RANGES];
	uint64_t pmis;		/* ToPA regions with INT filled (33.2.7.2 "ToPA PMI") */
	uint64_t entries;	/* ToPA entries the output went through */
	uint64_t region_size;	/* of the output region reached last */
	uint64_t entry;		/* its ToPA entry, as read when reached */
};

enum ptunit_result {
	PTUNIT_OK = 0,
	PTUNIT_GP,		/* the access raises #GP: nothing changed */
	PTUNIT_OPERR,		/* TraceEn set, but an operational error stopped it */
	PTUNIT_NO_TRIGGER,	/* TraceEn set with STATUS.Error/Stopped: TriggerEn 0 */
};

/* The MSRs as after reset (OUTPUT_MASK_PTRS bits 6:0 read as 1). */
void ptunit_init(struct ptunit *u, const struct ptcaps *caps);

/* Why msr does not exist on this CPU (an access #GPs), or NULL. */
const char *ptunit_msr_absent(const struct ptcaps *caps, uint32_t msr);

/* "IA32_RTIT_CTL", "IA32_RTIT_ADDR1_B", ...; NULL for another MSR. */
const char *ptunit_msr_name(uint32_t msr);

int ptunit_rdmsr(const struct ptunit *u, uint32_t msr, uint64_t *v, struct strbuf *why);

/*
 * WRMSR as the CPU does it. PTUNIT_GP with the rule in why (and nothing
 * changed); a write setting TraceEn runs the checks above, reaching the
 * first output region (mem->region): PTUNIT_OPERR with the error in why,
 * or PTUNIT_NO_TRIGGER. mem may be NULL where TraceEn is never set.
 */
int ptunit_wrmsr(struct ptunit *u, uint32_t msr, uint64_t v, const struct ptunit_mem *mem,
		 struct strbuf *why);

/* Packet generation is on: TraceEn, and neither Error nor Stopped. */
bool ptunit_triggered(const struct ptunit *u);

/*
 * The processor writes n packet bytes (while triggered): single-range
 * output wraps at the mask; ToPA follows END entries, sets Stopped after a
 * STOP region fills (OutputOffset left at size - 1), counts INT regions
 * and wraps at the largest table offset. An operational error on the way
 * sets Error and says why. PacketByteCnt counts where the CPU has it.
 * Returns the bytes written.
 */
size_t ptunit_emit(struct ptunit *u, const struct ptunit_mem *mem, const uint8_t *b, size_t n,
		   struct strbuf *why);

/* ToPA output: the bytes the current region still takes before the
 * output reaches its end, where a STOP entry stops it or the next entry
 * may be in error (33.2.7.2); 0 when not triggered or for single-range
 * output, which never stops (it wraps at its mask, 33.2.7.1). */
uint64_t ptunit_room(const struct ptunit *u);

/* The rule ToPA entry e (entry idx of the table at table) breaks once
 * output reaches it (33.2.7.2 "ToPA Errors"), or NULL. */
const char *ptunit_topa_entry_error(const struct ptcaps *caps, uint64_t table, unsigned idx,
				    uint64_t e);

/* The size of the region of a ToPA output entry (4K << Size). */
uint64_t ptunit_topa_size(uint64_t e);

#endif
