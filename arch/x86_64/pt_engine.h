/*
 * Programming Intel PT: the enable and disable sequences of SDM 33.3.2,
 * run through struct cpu_ops so that efipt.efi drives the real CPU and the
 * tests drive the PT model (tests/lib/pt_model.h) with the same code.
 *
 * Sequence for the firmware application:
 *
 *	ptcaps_parse(&caps, &cpuid);                 // CPUID, 33.3.1
 *	ptcfg_init(&cfg); ptcfg_option(...)...;      // user options
 *	ptcfg_validate(&cfg, &caps, &set, &msg);     // refuse or settings
 *	ptout_init(&out, regions, NREG, tables, NTAB);
 *	ptout_build(&out, &set, &mem, &msg);         // AllocatePages + ToPA tables
 *	rtit_engine_init(&eng, &cpu_native_ops, &caps, &set, &out, NULL);
 *	if (rtit_start(&eng, &msg) != RTIT_OK) { ptout_free(...); refuse(msg); }
 *	... run the traced code ...
 *	rtit_stop(&eng, &msg);                       // TraceEn=0, read back
 *	rtit_extract(&eng, &mem, span_fn, ctx, &ext); // trace bytes, oldest first
 *	ptout_free(&out, &mem);
 *
 * Every MSR access is one the CPUID allows (33.2.8, Table 33-11): the
 * output MSRs only with ToPA or single-range output, CR3_MATCH only with
 * CR3 filtering, ADDRn only for n < the enumerated range count.
 */
#ifndef EFIPT_ARCH_PT_ENGINE_H
#define EFIPT_ARCH_PT_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86_64/cpu_ops.h"
#include "arch/x86_64/pt_output.h"
#include "core/pt_caps.h"
#include "core/pt_config.h"
#include "core/pt_unit.h"
#include "core/strbuf.h"

/* One step the engine took, for `efipt plan` and the run manifest. */
enum rtit_op {
	RTIT_OP_RDMSR,
	RTIT_OP_WRMSR,
	RTIT_OP_TOPA, /* ToPA table `table` (index into ptout.tab) was written */
};

struct rtit_step {
	enum rtit_op op;
	uint32_t msr;
	uint64_t value;     /* WRMSR: written; RDMSR: read */
	unsigned table;
	int fault;          /* 0 or CPU_FAULT_GP */
};

struct rtit_log {
	struct rtit_step *steps;
	unsigned n, cap;
	bool truncated;
};

void rtit_log_init(struct rtit_log *log, struct rtit_step *steps, unsigned cap);

enum rtit_result {
	RTIT_OK = 0,
	RTIT_BUSY = -1,   /* TraceEn already set and no --force */
	RTIT_FAULT = -2,  /* an MSR access faulted (model: #GP) */
	RTIT_STATE = -3,  /* called in the wrong state */
};

/* Firmware's own PT configuration, saved by --force and restored at stop. */
struct rtit_saved {
	bool valid;
	uint64_t ctl, status, base, mask, cr3;
	unsigned nranges;
	uint64_t a[PTCFG_MAX_RANGES], b[PTCFG_MAX_RANGES];
};

struct rtit_engine {
	const struct cpu_ops *ops;
	const struct ptcaps *caps;
	const struct ptcfg_settings *set;
	const struct ptout *out;
	struct rtit_log *log;          /* optional */
	uint64_t ctl;                /* IA32_RTIT_CTL written to start (TraceEn set) */
	bool running;
	bool took_over;              /* firmware had TraceEn set; see saved */
	struct rtit_saved saved;
	/* read back by rtit_stop after TraceEn was cleared (33.3.2.2) */
	uint64_t stop_base, stop_mask, stop_status;
	bool stopped_valid;
	uint32_t fault_msr;          /* the MSR of the first faulting access */
	int fault;
	/* the unit as the CPU should hold it (core/pt_unit.h): a WRMSR its
	 * rules say would #GP is refused before it is made */
	struct ptunit rules;
	char refused[200];           /* why, for the first refused write */
};

void rtit_engine_init(struct rtit_engine *e, const struct cpu_ops *ops,
		      const struct ptcaps *caps, const struct ptcfg_settings *set,
		      const struct ptout *out, struct rtit_log *log);

/*
 * Start tracing (33.3.2.1): log the ToPA tables, read IA32_RTIT_CTL; if
 * TraceEn is set refuse (RTIT_BUSY) unless set->force, in which case clear
 * TraceEn and save firmware's configuration; clear IA32_RTIT_STATUS; write
 * OUTPUT_BASE, OUTPUT_MASK_PTRS, CR3_MATCH, ADDRn_A/B; IA32_RTIT_CTL last.
 */
int rtit_start(struct rtit_engine *e, struct strbuf *msg);

/*
 * Stop tracing (33.3.2.2, 33.3.3): clear TraceEn (flushes the CPU's
 * buffers), fence, read OUTPUT_BASE, OUTPUT_MASK_PTRS and STATUS, report
 * Error/Stopped in msg, and restore a configuration saved by --force.
 */
int rtit_stop(struct rtit_engine *e, struct strbuf *msg);

/*
 * The trace position now, exactly: the byte offset of the next packet
 * (ptout_position()). While TraceEn=1 the output MSRs need not be up to
 * date and packets may still sit in the CPU (Table 33-3, 33.2.8.2), so
 * this pauses: clear TraceEn (the buffered packets are written), read
 * OUTPUT_BASE, OUTPUT_MASK_PTRS and STATUS, set TraceEn again. The trace
 * shows the pause as TIP.PGD and TIP.PGE (33.2.8.3); nothing in between is
 * traced. RTIT_STATE: not running, the MSRs point outside the buffer, or
 * the trace had stopped (STATUS.Stopped or Error: not resumed; *pos is
 * where it ended); RTIT_FAULT: an MSR access faulted. The engine stays
 * running for rtit_stop in every case.
 */
int rtit_position(struct rtit_engine *e, uint64_t *pos, struct strbuf *msg);

/*
 * Continue a trace started elsewhere with these settings and this output
 * (the firmware boot trace: EfiptPei starts it, EfiptDxe or efipt.efi
 * collect stops it; arch/x86_64/boot_trace.c): the engine is as rtit_start
 * left it, running with IA32_RTIT_CTL = ctl | TraceEn. No MSR access.
 */
void rtit_adopt(struct rtit_engine *e, uint64_t ctl);

/* The same for a trace already stopped: the output MSRs as read back. */
void rtit_adopt_stopped(struct rtit_engine *e, uint64_t ctl, uint64_t base, uint64_t mask,
			uint64_t status);

/* The trace bytes after rtit_stop, oldest first (see ptout_extract). */
int rtit_extract(const struct rtit_engine *e, const struct ptout_mem *mem, ptout_span_fn fn,
	       void *ctx, struct ptout_extent *ext);

/*
 * One step as a JSON Lines object of the `efipt plan --format jsonl`
 * contract (DESIGN.md), without the newline:
 *   {"op":"rdmsr","msr":"0x570"}
 *   {"op":"wrmsr","msr":"0x570","value":"0x..."}
 *   {"op":"topa","table":"0x...","entries":[{"base":"0x...","size":N,
 *    "end":false,"stop":false,"int":false},...]}   (END: size 0)
 */
void rtit_step_jsonl(const struct rtit_step *s, const struct ptout *out, struct strbuf *sb);

/*
 * The trace configuration and outcome as one JSON object, for the run
 * manifest: {"rtit_ctl","output","mode","size","regions","tables",
 * "cr3_match"?, "ranges":[{"cfg","a","b"}], "took_over", and after rtit_stop
 * "output_base","output_mask_ptrs","status","error","stopped", and with ext
 * "bytes","wrapped","full","bad_pointer"}. Hex strings for MSR values.
 */
void rtit_trace_json(const struct rtit_engine *e, const struct ptout_extent *ext,
		     struct strbuf *sb);

/* "IA32_RTIT_CTL" etc., or NULL for an MSR the engine does not use. */
const char *rtit_msr_name(uint32_t msr);

#endif
