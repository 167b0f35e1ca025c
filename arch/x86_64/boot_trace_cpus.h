/*
 * The firmware boot trace on the application processors (EfiptDxe,
 * `--cpus all|LIST` in the options; docs/edk2.md "Several CPUs"). EfiptPei
 * traces the boot processor from memory discovery; the APs are not started
 * by anyone in PEI that efipt could reach, so EfiptDxe starts their traces
 * once MP services is there, through the per-CPU engine of efipt.efi trace
 * --cpus (arch/x86_64/pt_cpus.h: each CPU's own CPUID, validation, buffer
 * and ToPA; Goldmont's per-core MSRs: one thread per core). Unlike efipt.efi,
 * a CPU that cannot trace is left out with its reason and the others go
 * on: the boot must not stop for a trace.
 *
 *	boottrace_aps_start(a, rec, &mp, mem);   // MP services there
 *	... DXE ...
 *	boottrace_aps_stop(a, where, ops);       // at the stop point
 *	boottrace_aps_put(a, table)              // each AP's record after the images
 *
 * Each AP gets a struct fwtrace_rec of its own (status, reason, CPUID,
 * settings, buffer, output MSRs) that collect adopts and extracts as it
 * does the boot processor's.
 */
#ifndef EFIPT_ARCH_BOOT_TRACE_CPUS_H
#define EFIPT_ARCH_BOOT_TRACE_CPUS_H

#include "arch/x86_64/boot_trace.h"
#include "arch/x86_64/pt_cpus.h"

/* The processors as MP services shows them (the PT model per CPU in tests). */
struct boottrace_mp {
	unsigned count;		/* processors MP services counts */
	unsigned self;		/* the boot processor's number */
	/* 0 with CPU number's APIC ID, location and whether it is enabled and
	 * healthy; non-zero when MP services cannot say */
	int (*info)(void *ctx, unsigned number, uint32_t *apic_id, uint32_t *package,
		    uint32_t *core, int *usable);
	/* run fn(arg) on CPU number and wait for it; 0 when it ran */
	int (*on_cpu)(void *ctx, unsigned number, void (*fn)(void *arg), void *arg);
	/* the CPU access valid on CPU number while on_cpu runs there */
	const struct cpu_ops *(*ops)(void *ctx, unsigned number);
	void *ctx;
};

#define BOOTTRACE_WHY 256

/* About 800 KiB: allocate it. */
struct boottrace_aps {
	struct ptcpus c;
	struct ptcpus_env env;
	const struct boottrace_mp *mp;
	unsigned n;			/* cpu[]: the boot processor, then the APs */
	struct ptcpu cpu[FWTRACE_MAX_CPUS + 1];
	struct ptout_region reg[FWTRACE_MAX_CPUS + 1][FWTRACE_MAX_REGIONS];
	struct ptout_table tab[FWTRACE_MAX_CPUS + 1][FWTRACE_MAX_TABLES];
	struct cpuid_set cpuid[FWTRACE_MAX_CPUS + 1];
	char why[FWTRACE_MAX_CPUS + 1][BOOTTRACE_WHY];
	unsigned nrec;			/* rec[]: one per AP selected */
	struct fwtrace_rec rec[FWTRACE_MAX_CPUS];
	struct fwtrace_opts opts;
	struct cpuid_set profile;	/* EMULATED: rec's CPUID */
	char msg[4096];
};

/*
 * Start the APs the options of rec (the boot processor's record, RUNNING)
 * ask for with --cpus, each validated against its own CPUID, its buffer laid
 * out through mem. Numbers that name no processor and processors MP
 * services reports disabled are noted in rec->reason and skipped; an AP
 * that cannot trace gets its record with the reason (the CPUID bit). Sets
 * rec->cpu_number and apic_id. Where rec says EMULATED (QEMU TCG, a test
 * build), each AP's capabilities come from the same profile, rec's CPUID.
 * Returns the APs tracing.
 */
unsigned boottrace_aps_start(struct boottrace_aps *a, struct fwtrace_rec *rec,
			     const struct boottrace_mp *mp, const struct ptout_mem *mem);

/*
 * Clear TraceEn on every AP started (33.3.2.2) and read its output MSRs
 * back into its record (STOPPED at where, or FAILED when its procedure did
 * not run: its TraceEn may still be set, the reason says so). ops: this
 * CPU's (the stop's TSC). Returns the APs that could not be stopped.
 */
unsigned boottrace_aps_stop(struct boottrace_aps *a, uint32_t where, const struct cpu_ops *ops);

/*
 * The APs' records after table's images (room for them is the caller's):
 * sets table->ncpus. Seal the table after.
 */
void boottrace_aps_put(const struct boottrace_aps *a, struct fwtrace_rec *table);

#endif
