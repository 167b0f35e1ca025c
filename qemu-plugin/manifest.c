/* The plugin's manifest.json; see manifest.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/pt_rtit.h"
#include "core/run_manifest.h"
#include "core/strbuf.h"
#include "qemu-plugin/manifest.h"
#include "qemu-plugin/outfile.h"

/* Common members (core/run_manifest.h) through a buffer that fits them:
 * an escaped byte takes at most 6 */
static void put_common(struct outfile *o, const struct manifest_facts *f, const char *id, bool head)
{
	size_t cap = 4096 + 6 * (strlen(id) + strlen(f->opt->args) + strlen(f->message)) +
		     strlen(f->files);
	char *buf = malloc(cap);
	if (!buf) {
		o->err = o->err ? o->err : ENOMEM;
		return;
	}
	struct strbuf sb;
	sb_init(&sb, buf, cap);
	if (head) {
		struct runmf_head h = { id, f->started, "qemu", f->opt->args };
		runmf_open(&sb, &h);
	} else {
		runmf_files_open(&sb);
		sb_puts(&sb, f->files);
		runmf_close(&sb, f->files[0] != 0, f->result, "none", f->message);
	}
	if (sb.truncated)
		o->err = o->err ? o->err : ENOBUFS;
	else
		outfile_write(o, buf, sb.len);
	free(buf);
}

int manifest_write(const struct manifest_facts *f, char *err, size_t errlen)
{
	const struct plugin_options *opt = f->opt;
	struct outfile o;
	if (outfile_open(&o, opt->dir, "manifest.json", err, errlen))
		return -1;
	const char *id = strrchr(opt->dir, '/') ? strrchr(opt->dir, '/') + 1 : opt->dir;
	/* the IA32_RTIT_CTL a CPU would have traced this with */
	const struct ptgen_timing *t = &opt->timing;
	uint64_t ctl = RTIT_CTL_TRACEEN | RTIT_CTL_OS | RTIT_CTL_USER | RTIT_CTL_BRANCHEN |
		       (opt->retcomp ? 0 : RTIT_CTL_DISRETC) | (t->tsc ? RTIT_CTL_TSCEN : 0) |
		       (t->mtc ? RTIT_CTL_MTCEN | (uint64_t)t->mtc_freq << RTIT_CTL_MTCFREQ_SHIFT : 0) |
		       (t->cyc ? RTIT_CTL_CYCEN | (uint64_t)t->cyc_thresh << RTIT_CTL_CYCTHRESH_SHIFT
			       : 0);
	for (unsigned i = 0; i < opt->cfg.nfilter; i++)
		ctl |= 1ull << RTIT_CTL_ADDR_CFG_SHIFT(i); /* ADDRn_CFG = 1: filter */
	if (opt->cfg.cr3_filter)
		ctl |= RTIT_CTL_CR3FILTER;
	if (f->guest_json)
		ctl = f->guest_ctl & ~RTIT_CTL_TRACEEN; /* what the guest programmed */
	char sbuf[32], tbuf[32];
	put_common(&o, f, id, true);
	outfile_printf(&o,
		       "  \"trace\": {\"source\": \"qemu\", \"emulated\": true, "
		       "\"rtit_ctl\": \"0x%" PRIx64 "\", \"bytes\": %" PRIu64 ", "
		       "\"insns\": %" PRIu64 ", \"executed\": %" PRIu64 ", \"psb\": %u, "
		       "\"start\": \"%s\", \"stop\": \"%s\", \"limit\": %" PRIu64 ", "
		       "\"first_ip\": \"0x%" PRIx64 "\", \"first_call\": %" PRIu64 ", "
		       "\"end_ip\": \"0x%" PRIx64 "\", "
		       "\"stopped_by\": \"%s\", \"events\": %" PRIu64 ", "
		       "\"mode_changes\": %" PRIu64 ", \"unknown_mode_blocks\": %" PRIu64 ", "
		       "\"code_conflicts\": %" PRIu64,
		       ctl, f->bytes, f->inf->traced, f->inf->executed, f->gen->w.psb_period,
		       options_start_name(opt, sbuf, sizeof(sbuf)),
		       options_stop_name(opt, tbuf, sizeof(tbuf)), opt->cfg.limit, f->inf->first_ip,
		       f->inf->first_call, f->inf->end_ip, f->stopped_by, f->inf->events, f->inf->mode_changes,
		       f->inf->no_mode, f->code->conflicts);
	/* code that changed while traced: its bytes, and the changes the
	 * decoder applies at their trace positions (codechanges.bin) */
	outfile_printf(&o, ", \"code_changes\": %" PRIu64, f->code_records);
	if (f->cpus > 1)
		outfile_printf(&o, ", \"code_changes_other_cpu\": %" PRIu64, f->code_copies);
	if (f->code->conflicts)
		outfile_printf(&o, ", \"first_code_conflict\": \"0x%" PRIx64 "\"",
			       f->code->first_conflict);
	/* registers (plugin API 2 on): code sizes bound by CR0/EFER/EFLAGS,
	 * CR3 where tracing started and the PIPs of its writes */
	outfile_printf(&o, ", \"registers\": %s", f->inf->reg_blocks ? "true" : "false");
	if (f->inf->cr3_known)
		outfile_printf(&o, ", \"cr3\": \"0x%" PRIx64 "\", \"pips\": %" PRIu64,
			       f->inf->cr3_start, f->inf->pips);
	/* the debug port's bytes (debugport.h) */
	if (!f->opt->debugport)
		;
	else if (!f->inf->reg_blocks)
		outfile_printf(&o, ", \"debug_port\": {\"port\": \"0x%x\", \"recorded\": false, "
			       "\"why\": \"needs QEMU 9.0 or newer (plugin API 2: registers; OUTS: "
			       "10.0, API 4) and regs=on\"}", f->opt->debugport);
	else
		outfile_printf(&o, ", \"debug_port\": {\"port\": \"0x%x\", \"recorded\": true, "
			       "\"file\": \"debugport.jsonl\", \"records\": %" PRIu64 ", "
			       "\"bytes\": %" PRIu64 ", \"unread\": %" PRIu64 ", \"dropped\": %"
			       PRIu64 "}", f->opt->debugport, f->dbg ? f->dbg->records : 0,
			       f->dbg ? f->dbg->bytes : 0, f->dbg_unread, f->dbg_dropped);
	if (opt->cfg.cr3_filter)
		outfile_printf(&o, ", \"cr3_match\": \"0x%" PRIx64 "\", \"context_changes\": %"
			       PRIu64, opt->cfg.cr3_match, f->inf->context_changes);
	if (f->inf->reg_fixes)
		outfile_printf(&o, ", \"register_mode_fixes\": %" PRIu64, f->inf->reg_fixes);
	if (f->guest_json)
		outfile_printf(&o, ", \"guest\": %s", f->guest_json);
	if (f->vectors_json)
		outfile_printf(&o, ", \"interrupts\": %s", f->vectors_json);
	/* one trace per vCPU: trace.pt (and the members above) is CPU 0's */
	outfile_printf(&o, ", \"cpus\": %u, \"traces\": [%s]", f->cpus, f->traces ? f->traces : "");
	if (opt->size)
		outfile_printf(&o, ", \"size\": %" PRIu64 ", \"generated\": %" PRIu64
			       ", \"mode\": \"%s\", \"%s\": %s", opt->size, f->gen->w.bytes, opt->wrap ? "wrap" : "stop", opt->wrap ? "wrapped" : "full",
			       (opt->wrap ? f->wrapped : f->inf->full) ? "true" : "false");
	if (opt->cfg.nfilter) {
		outfile_printf(&o, ", \"ranges\": [");
		for (unsigned i = 0; i < opt->cfg.nfilter; i++)
			outfile_printf(&o, "%s{\"cfg\": 1, \"a\": \"0x%" PRIx64 "\", \"b\": \"0x%"
				       PRIx64 "\"}", i ? ", " : "", opt->cfg.filter_a[i],
				       opt->cfg.filter_b[i]);
		outfile_printf(&o, "], \"filtered\": %" PRIu64, f->inf->filtered);
	}
	if (t->tsc || t->mtc || t->cyc) {
		/* the emulated clock (ptgen.h): the facts a decoder needs */
		outfile_printf(&o, "},\n  \"timing\": {\"emulated\": true, \"clock\": \"qemu icount "
			       "shift=%u%s: %u ns per instruction\", \"tsc_start\": \"0x%" PRIx64
			       "\", \"tsc_stop\": \"0x%" PRIx64 "\", \"tsc_hz\": %llu, "
			       "\"nom_freq\": %u, \"cpuid15_eax\": %u, \"cpuid15_ebx\": %u, "
			       "\"cpuid15_ecx\": %u",
			       t->shift, opt->shift_given ? "" : " (no -icount: assumed)",
			       1u << t->shift, f->tsc_start, f->tsc_stop, PTGEN_TSC_HZ,
			       PTGEN_NOM_RATIO, PTGEN_CPUID15_EAX, PTGEN_CPUID15_EBX,
			       PTGEN_CPUID15_ECX);
	}
	outfile_printf(&o, "},\n");
	put_common(&o, f, id, false);
	return outfile_commit(&o, err, errlen);
}
