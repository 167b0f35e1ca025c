/*
 * The firmware's own boot trace (edk2/EfiptPkg, docs/edk2.md): the steps
 * EfiptPei, EfiptDxe and `efipt.efi collect` take, over the same engine as
 * efipt.efi trace (core/pt_config.c validation, pt_output.c layout,
 * pt_engine.c sequence) and through struct cpu_ops, so the hosted tests run
 * them against the PT model (tests/unit/test_boot_trace.c).
 *
 *   EfiptPei, permanent memory installed:
 *	boottrace_start(rec, w, options, flags, ops, mem);   // -> HOB
 *   EfiptDxe, first driver:
 *	boottrace_check_memory(rec, reserved_fn, ...);       // HOB sane?
 *	boottrace_adopt(rec, w, ops, why);                   // running trace
 *	... DXE ... at the stop point:
 *	boottrace_stop(rec, w, FWTRACE_STOP_READY_TO_BOOT, msg); // -> table
 *   efipt.efi collect:
 *	fwtrace_check(table), boottrace_check_memory(...), boottrace_adopt(),
 *	boottrace_stop(..., FWTRACE_STOP_COLLECT) if still running,
 *	boottrace_extract(rec, w, mem, span_fn, ...)          // trace.pt
 *
 * The record (core/fwtrace.h) carries everything between the steps; the
 * work area holds what is rebuilt from it. Nothing here allocates but
 * through the ptout_mem given to boottrace_start.
 */
#ifndef EFIPT_ARCH_BOOT_TRACE_H
#define EFIPT_ARCH_BOOT_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86_64/cpu_ops.h"
#include "arch/x86_64/pt_engine.h"
#include "arch/x86_64/pt_output.h"
#include "core/fwtrace.h"

/* Working state of one step (about 14 KiB: place it in allocated memory). */
struct boottrace_work {
	struct cpuid_set cpuid;
	struct ptcaps caps;
	struct fwtrace_opts opts;
	struct ptcfg_settings set;
	struct ptout out;
	struct ptout_region reg[FWTRACE_MAX_REGIONS];
	struct ptout_table tab[FWTRACE_MAX_TABLES];
	struct rtit_engine eng;
	char msg[512];
};

/* What the platform allows boottrace_start (its PCDs) and where the options came from. */
#define BOOTTRACE_FROM_VARIABLE (1u << 0) /* the EfiptNextBoot variable, not PcdEfiptOptions */
#define BOOTTRACE_MARKERS       (1u << 1) /* PcdEfiptQemuMarkers: trace markers under QEMU TCG */
#define BOOTTRACE_SYNTHETIC     (1u << 2) /* PcdEfiptSynthetic: a test build's synthetic source */

/*
 * PEI: read CPUID, parse the options, validate them against CPUID exactly
 * as efipt.efi trace does, reserve and lay out the buffer, and start Intel
 * PT on this CPU. Without PT under QEMU's TCG (with BOOTTRACE_MARKERS) it
 * sets FWTRACE_F_MARKERS instead: the caller then runs the EPT1 start
 * marker (arch/x86_64/trace_marker.h, inline where the trace is to begin),
 * so that efipt-qemu.so traces from there. Fills rec (set up by the caller
 * with fwtrace_init) and returns its status: RUNNING, or why not in
 * rec->reason. Nothing stays allocated unless RUNNING.
 */
uint32_t boottrace_start(struct fwtrace_rec *rec, struct boottrace_work *w, const char *options,
			 uint32_t flags, const struct cpu_ops *ops, const struct ptout_mem *mem);

/*
 * The same, where a test build (PcdEfiptEmulatedCaps) has a CPU profile:
 * under QEMU's TCG alone (CPUID names the TCG hypervisor, as efipt.efi
 * --emulated-caps requires), PT's capabilities come from the profile
 * (ptcaps_emulate) and PT is programmed for efipt-qemu.so start=guest;
 * the record says EMULATED (FWTRACE_F_EMULATED) and keeps the profile as
 * its CPUID. Elsewhere the profile is ignored.
 */
uint32_t boottrace_start_emulated(struct fwtrace_rec *rec, struct boottrace_work *w,
				  const char *options, uint32_t flags,
				  const struct cpuid_set *profile, const struct cpu_ops *ops,
				  const struct ptout_mem *mem);

/* Does the firmware hold [base, base+size) as memory for this trace? */
typedef bool (*boottrace_mem_fn)(void *ctx, uint64_t base, uint64_t size);

/*
 * Every output region and ToPA table of a RUNNING or STOPPED record must
 * lie in memory fn accepts (reserved for it). 0, or -1 naming the first
 * that does not.
 */
int boottrace_check_memory(const struct fwtrace_rec *rec, boottrace_mem_fn fn, void *ctx,
			   struct strbuf *why);

/*
 * Rebuild caps, settings, layout and engine from a checked record (no MSR
 * access): a RUNNING record's engine is running, a STOPPED one's has its
 * output state. 0, or -1 with why (the record was not checked, or its
 * configuration does not validate against its own CPUID any more).
 */
int boottrace_adopt(const struct fwtrace_rec *rec, struct boottrace_work *w,
		    const struct cpu_ops *ops, struct strbuf *why);

/*
 * Stop the trace adopted in w (33.3.2.2): for Intel PT clear TraceEn and
 * read the output MSRs back into rec; sets tsc_stop, stopped_at and status
 * STOPPED. A synthetic trace is left to boottrace_synth_store. Where the
 * start marker ran instead, only stopped_at is set, the first time (return
 * 0: the caller runs the EPT0 stop marker now; 1: it ran already).
 * Returns 0, or -1 with why in msg (an MSR faulted, not running).
 */
int boottrace_stop(struct fwtrace_rec *rec, struct boottrace_work *w, uint32_t where,
		   struct strbuf *msg);

/*
 * A record that cannot be trusted (EfiptDxe refusing the HOB) says nothing
 * reliable about PT, which may still be running: read CPUID afresh and,
 * where PT is enumerated and IA32_RTIT_CTL.TraceEn is set, clear it
 * (allowed in the same write whatever else is set, 33.2.8.3). Returns 1 if
 * it stopped a trace, 0 if none ran, -1 if an MSR access faulted.
 */
int boottrace_halt(struct boottrace_work *w, const struct cpu_ops *ops);

/* The trace bytes of a STOPPED record, oldest first (ptout_extract). */
int boottrace_extract(const struct fwtrace_rec *rec, struct boottrace_work *w,
		      const struct ptout_mem *mem, ptout_span_fn fn, void *ctx,
		      struct ptout_extent *ext);

/*
 * Synthetic source: write len trace bytes into the adopted buffer in the
 * order the CPU fills it (regions in ToPA order, from the start) and set
 * the output state a CPU would leave (OUTPUT_BASE/MASK_PTRS at the next
 * byte; a full stop-mode buffer as ToPA STOP leaves it). len beyond the
 * buffer is cut. Returns the bytes stored.
 */
uint64_t boottrace_synth_store(struct fwtrace_rec *rec, struct boottrace_work *w,
			       const struct ptout_mem *mem, const uint8_t *bytes, uint64_t len);

/* The layout o (regions, ToPA tables, output MSRs) into the record. */
void boottrace_put_layout(struct fwtrace_rec *r, const struct ptout *o);

/* FNV-1a over 64-bit instruction addresses: the synthetic truth's hash. */
static inline uint64_t boottrace_ip_hash(uint64_t h, uint64_t ip)
{
	for (unsigned i = 0; i < 8; i++) {
		h ^= (ip >> (8 * i)) & 0xff;
		h *= 0x100000001b3ull;
	}
	return h;
}
#define BOOTTRACE_IP_HASH_INIT 0xcbf29ce484222325ull

#endif
