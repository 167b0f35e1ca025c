/*
 * Intel PT on several CPUs at once (efipt.efi trace --cpus): each CPU is
 * identified by its own CPUID, validated against its own capabilities
 * (hybrid parts differ between core types), gets its own output buffer and
 * ToPA, and is started and stopped by the rtit engine running ON that CPU.
 * Where a core's RTIT MSRs are shared by its threads (Goldmont,
 * CPUMODEL_QUIRK_CORE_SCOPED) one thread per core traces; the others are
 * marked PTCPU_SHARED and say which CPU traces their core.
 *
 * The caller says how to run a function on a CPU (MP services in firmware,
 * a PT model per CPU in tests): struct ptcpus_env. Index 0 is the CPU the
 * caller runs on (the BSP); it is started last and stopped first, so its
 * trace holds the least of efipt itself.
 *
 * Every way out leaves no CPU with TraceEn set by us: a start that fails on
 * one CPU stops every CPU already started before it returns.
 *
 *	ptcpus_init(&c, cpus, n, &env);      // cpus[i].number/apic_id/... filled
 *	ptcpus_identify(&c, profile, &msg);  // CPUID on each CPU
 *	ptcpus_prepare(&c, &cfg, &msg);      // validate and lay out, per CPU
 *	ptcpus_start(&c, &msg);              // APs, then the BSP
 *	... traced code ...
 *	ptcpus_stop(&c, &msg);               // the BSP, then the APs
 *	ptcpus_extract(&c, i, fn, ctx, &ext) for each traced CPU
 *	ptcpus_free(&c);
 */
#ifndef EFIPT_ARCH_PT_CPUS_H
#define EFIPT_ARCH_PT_CPUS_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86_64/cpu_ops.h"
#include "arch/x86_64/pt_engine.h"
#include "arch/x86_64/pt_output.h"
#include "core/cpuid_set.h"
#include "core/pt_caps.h"
#include "core/pt_config.h"
#include "core/strbuf.h"

enum ptcpu_state {
	PTCPU_IDLE,	/* not (yet) programmed */
	PTCPU_SHARED,	/* its core's RTIT MSRs are traced by cpu[shared_with] */
	PTCPU_READY,	/* validated and laid out */
	PTCPU_RUNNING,	/* TraceEn set by us */
	PTCPU_STOPPED,	/* TraceEn cleared, output read back */
	PTCPU_ELSEWHERE,	/* traced by the caller's own engine (EfiptPei's BSP) */
	PTCPU_REFUSED,	/* skip_refused: cannot trace; why says so */
};

struct ptcpu {
	/* the caller's */
	unsigned number;		/* MP services' processor number */
	uint32_t apic_id;
	uint32_t package, core;		/* MP services' location */
	struct ptout_region *reg;	/* room for the layout */
	unsigned max_reg;
	struct ptout_table *tab;
	unsigned max_tab;
	struct cpuid_set *cpuid;	/* NULL, or where identify keeps its CPUID */
	char *why;			/* skip_refused: room for why it is refused */
	unsigned why_cap;
	/* ptcpus_* fill these */
	struct ptcaps caps;
	struct ptcfg_settings set;
	struct ptout out;
	struct rtit_engine eng;
	enum ptcpu_state state;
	bool laid_out;
	unsigned shared_with;		/* PTCPU_SHARED: the index that traces the core */
	int rc;				/* RTIT_* of its last start or stop */
};

struct ptcpus_env {
	/* run fn(arg) on CPU index i and return 0 when it ran; non-zero: it
	 * could not run there (the AP did not answer) */
	int (*on_cpu)(void *ctx, unsigned i, void (*fn)(void *arg), void *arg);
	/* the CPU access valid while on_cpu runs on CPU i */
	const struct cpu_ops *(*ops)(void *ctx, unsigned i);
	const struct ptout_mem *mem;
	void *ctx;
};

struct ptcpus {
	struct ptcpu *cpu;
	unsigned n;
	const struct ptcpus_env *env;
	struct cpuid_set scratch;	/* CPUID of the CPU being identified */
	/* what the procedure on a CPU works on */
	unsigned cur;
	const struct cpuid_set *profile;
	bool emulated;
	struct strbuf *msg;
	/* false (efipt.efi trace): one CPU that cannot trace fails the whole;
	 * true (EfiptDxe): it becomes PTCPU_REFUSED with its reason, the others go on */
	bool skip_refused;
};

void ptcpus_init(struct ptcpus *c, struct ptcpu *cpu, unsigned n, const struct ptcpus_env *env);

/*
 * Read each CPU's CPUID on that CPU into cpu[i].caps; with a profile, its
 * PT capabilities (ptcaps_emulate, efipt.efi --emulated-caps). Marks the
 * sibling threads of core-scoped CPUs PTCPU_SHARED and says so in msg.
 * -1 (msg names the CPU) when a CPU could not be reached or has no PT;
 * with skip_refused that CPU is PTCPU_REFUSED instead. A CPU the caller
 * set PTCPU_ELSEWHERE is identified (its core counts as traced), not
 * prepared, started or stopped.
 */
int ptcpus_identify(struct ptcpus *c, const struct cpuid_set *profile, struct strbuf *msg);

/*
 * Validate cfg against each CPU's own capabilities and lay out its buffer.
 * -1 when one CPU refuses (msg: "CPU n (APIC ID 0x..): " and the reason);
 * nothing stays allocated then.
 */
int ptcpus_prepare(struct ptcpus *c, const struct ptcfg *cfg, struct strbuf *msg);

/*
 * Start tracing on every prepared CPU, the BSP (index 0) last. RTIT_OK, or
 * the first failure's RTIT_* (or RTIT_FAULT when a CPU could not be
 * reached) after every CPU already started was stopped again.
 */
int ptcpus_start(struct ptcpus *c, struct strbuf *msg);

/*
 * Stop every running CPU, the BSP first (33.3.2.2: TraceEn cleared, output
 * read back). 0, or -1 when a CPU could not be reached to stop it (msg says
 * which: its TraceEn may still be set).
 */
int ptcpus_stop(struct ptcpus *c, struct strbuf *msg);

/* CPUs with TraceEn set by us (0 after ptcpus_stop succeeded). */
unsigned ptcpus_running(const struct ptcpus *c);

/* CPU i's trace after the stop, oldest first (rtit_extract). */
int ptcpus_extract(const struct ptcpus *c, unsigned i, ptout_span_fn fn, void *ctx,
		   struct ptout_extent *ext);

/* Free every buffer laid out (after the extracts). */
void ptcpus_free(struct ptcpus *c);

/* "CPU n (APIC ID 0x..)" */
void ptcpus_name(const struct ptcpus *c, unsigned i, struct strbuf *sb);

#endif
