/*
 * manifest.json of the plugin's run directory (docs/format.md, "trace"
 * for the qemu source), written last through manifest.json.tmp.
 */
#ifndef EFIPT_PLUGIN_MANIFEST_H
#define EFIPT_PLUGIN_MANIFEST_H

#include <stddef.h>

#include "qemu-plugin/codemap.h"
#include "qemu-plugin/debugport.h"
#include "qemu-plugin/infer.h"
#include "qemu-plugin/options.h"
#include "qemu-plugin/ptgen.h"

struct manifest_facts {
	const struct plugin_options *opt;
	const struct infer *inf;
	const struct ptgen *gen;
	const struct codemap *code;
	uint64_t code_records;	/* codechanges.bin's records */
	uint64_t code_copies;	/* ... of them taken up from another CPU */
	const char *started;	/* host local time */
	const char *stopped_by;	/* "exit", "stop", "limit", "full" */
	const char *files;	/* the "files" array's entries, JSON */
	const char *result;	/* "ok" or "failed" */
	const char *message;
	unsigned cpus;		/* traces written */
	const char *traces;	/* the "traces" array's entries, JSON */
	uint64_t tsc_start, tsc_stop;	/* emulated TSC where the trace began and ended */
	uint64_t bytes;		/* in trace.pt */
	bool wrapped;		/* mode=wrap dropped older trace */
	const struct dbgport_file *dbg;	/* open: debugport.jsonl written */
	uint64_t dbg_unread, dbg_dropped;
	const char *guest_json;	/* start=guest: trace.guest (guest_rtit.h), else NULL */
	uint64_t guest_ctl;	/* ... and CPU 0's IA32_RTIT_CTL as programmed */
	const char *vectors_json;	/* "interrupts" (idt_manifest()), or NULL */
};

/* Returns 0, or -1 with "PATH: reason" in err. */
int manifest_write(const struct manifest_facts *f, char *err, size_t errlen);

#endif
