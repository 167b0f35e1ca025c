/*
 * efipt-qemu.so: a QEMU TCG plugin (QEMU 7.2 to 10.0: plugin_api.h) that
 * writes the Intel PT trace a processor would have written for what the
 * guest executes, as an efipt run directory (docs/format.md, docs/qemu.md):
 *
 *   qemu-system-x86_64 ... -plugin build/efipt-qemu.so,dir=RUNDIR[,OPTION...]
 *
 * options: psb=N (bytes between PSB+, default 4096), retcomp=off (DisRETC;
 * "noretcomp" too),
 * start=reset|protected|marker|0xADDR, stop=exit|marker|0xADDR, limit=N
 * (most instructions traced), after=N (the start condition counts only
 * after N executions: a window deep into a run), exit=on (end QEMU when
 * the trace stops). Each vCPU has its own trace (trace.pt for CPU 0,
 * trace.cpuN.pt for CPU N: docs/format.md); CPU 0's stop ends them all.
 *
 * This file is the QEMU glue: the translation callback (which classifies
 * each instruction once, insn_info.c), the execution callbacks (infer.c),
 * and the files at the end (codemap.c, manifest.c). Arguments: options.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "qemu-plugin/codelog.h"
#include "qemu-plugin/codemap.h"
#include "qemu-plugin/debugport.h"
#include "qemu-plugin/guest_rtit.h"
#include "qemu-plugin/idt.h"
#include "qemu-plugin/infer.h"
#include "qemu-plugin/manifest.h"
#include "qemu-plugin/options.h"
#include "qemu-plugin/outfile.h"
#include "qemu-plugin/plugin_api.h"
#include "qemu-plugin/ptgen.h"
#include "core/cpuid_set.h"
#include "core/pt_rtit.h"
#include "core/run_manifest.h"
#include "core/strbuf.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define CHUNK 4096	/* struct pinsn allocated this many at a time */

/* mode=wrap: the last cap bytes of a trace, buf[pos] the oldest once
 * wrapped; written to out at the end */
struct ring {
	uint8_t *buf;
	size_t cap, pos;
	bool wrapped;
	struct outfile *out;
};

/* A translated block: its instructions, consecutive. */
struct tbinfo {
	size_t n;
	bool straight;		/* see infer_exec_run() */
	bool per_insn;		/* a callback per instruction, none per block */
	struct pinsn *insn;
};

/* An OUT or OUTS in a block (debugport.h): its bytes per iteration in each
 * code size. */
struct out_site {
	const struct tbinfo *t;
	size_t i;
	uint8_t size[3];
	int port;		/* OUT imm8's, -1: DX */
	bool string, rep;
};

/* One vCPU's trace. Its callbacks run on its own thread (MTTCG): only the
 * code map and the finishing are shared, under P.lock. */
struct vcpu {
	struct ptgen gen;
	struct infer inf;
	struct outfile trace;
	char name[32];		/* trace.pt, trace.cpuN.pt */
	const struct tbinfo *last_tb;	/* the block running on it */
	uint64_t last_tb_start;		/* insn_started when it began */
	pthread_mutex_t lock;	/* its callbacks against finish() */
	struct papi_regs regs;	/* plugin API 2 on, regs=on */
	struct infer_regs last_tb_regs;	/* at the start of last_tb */
	struct ring ring;	/* mode=wrap: its trace's bytes go here first */
	unsigned index;		/* its vCPU number */
	struct dbgport_queue dq;	/* OUTs to the debug port not yet fed */
	struct idt_cpu idt;	/* its IDTR, for the vectors of its events */
	uint64_t struck;	/* events found right after a near indirect branch or Jcc */
	bool idt_fresh;		/* the gates read since tracing started */
	/* start=guest: the PT unit its WRMSRs program, and the WRMSR about
	 * to run (on_wrmsr() before on_insn() feeds it, see there) */
	struct grtit rt;
	bool pend;
	uint32_t pend_msr;
	uint64_t pend_value, pend_ip;
	uint64_t pend_cr3;	/* 0: not read */
	bool rt_said;		/* the output's stop was reported */
	size_t chg_seen;	/* P.changes looked at (codelog_foreign()) */
};

static struct {
	struct plugin_options opt;
	bool exiting;		/* in QEMU's atexit: exit() not again */
	struct vcpu *cpu;	/* ncpus of them */
	unsigned ncpus;
	struct codemap code;
	struct codelog changes;	/* code that changed while traced (code_lock) */
	pthread_mutex_t lock;	/* translation, finishing */
	pthread_mutex_t code_lock;	/* the code map (taken inside a vCPU's lock) */
	pthread_mutex_t dbg_lock;	/* the debug port's file (inside a vCPU's lock) */
	struct dbgport_file dbg;
	bool vectors;		/* interrupts.jsonl (plugin API 4, regs=on) */
	struct idt_file idt;
	uint64_t dbg_unread;	/* OUTS bytes no memory access could read */
	struct pinsn *chunk;
	size_t chunk_used;
	/* One callback per block and an inline count per instruction (cheaper
	 * than a callback each): at the next block, the count says how many
	 * of the last block's instructions started (all, unless one faulted
	 * or QEMU restarted an I/O instruction). With several vCPUs the count
	 * would be shared: then a callback per instruction instead. */
	bool per_insn;
	struct papi_counter insn_started;	/* incremented inline by every instruction */
	bool regs;		/* blocks read registers (plugin API 2 on, regs=on) */
	bool finished;
	const char *stopped_by;
	char started[32];	/* host local time at the start */
	char files[8192];	/* manifest "files" entries so far */
	size_t files_len;
	/* start=guest (guest_rtit.h) */
	bool guest;
	struct ptcaps caps;	/* the emulated unit's */
	struct outfile rtlog;	/* rtit.jsonl: every WRMSR to the unit's MSRs */
	struct outfile gout;	/* guest-output.bin: the output regions */
	uint64_t gout_size;
	pthread_mutex_t rtlog_lock;
} P = { .lock = PTHREAD_MUTEX_INITIALIZER, .code_lock = PTHREAD_MUTEX_INITIALIZER,
	.dbg_lock = PTHREAD_MUTEX_INITIALIZER, .rtlog_lock = PTHREAD_MUTEX_INITIALIZER };

static bool finished(void)
{
	return __atomic_load_n(&P.finished, __ATOMIC_ACQUIRE);
}

/* a manifest "files" entry; status "written" or why not (errno_name()) */
static void note_file_status(const char *name, uint64_t size, const char *status)
{
	if (P.files_len >= sizeof(P.files) - 1)
		return; /* full: the list stops at the last whole entry */
	struct strbuf sb;
	sb_init(&sb, P.files + P.files_len, sizeof(P.files) - P.files_len);
	runmf_file(&sb, P.files_len != 0, name, size, status);
	if (sb.truncated) {
		P.files[P.files_len] = 0;
		P.files_len = sizeof(P.files) - 1;
	} else {
		P.files_len += sb.len;
	}
}

static void note_file(void *ctx, const char *name, uint64_t size)
{
	(void)ctx;
	note_file_status(name, size, "written");
}

/* A host write failure as a files status (the way efipt.efi records an
 * EFI_STATUS there): the errno's name. */
static const char *errno_name(int e)
{
	switch (e) {
	case ENOSPC: return "ENOSPC";
	case EFBIG: return "EFBIG";
	case EDQUOT: return "EDQUOT";
	case EIO: return "EIO";
	case EROFS: return "EROFS";
	case EACCES: return "EACCES";
	default: return "write failed";
	}
}

static bool trace_write(void *ctx, const uint8_t *buf, size_t n)
{
	struct outfile *o = ctx;
	outfile_write(o, buf, n);
	return !o->err;
}

/* mode=wrap: into the vCPU's ring (ctx), overwriting the oldest bytes */
static bool ring_write(void *ctx, const uint8_t *buf, size_t n)
{
	struct ring *r = ctx;
	while (n) {
		size_t k = r->cap - r->pos < n ? r->cap - r->pos : n;
		memcpy(r->buf + r->pos, buf, k);
		buf += k;
		n -= k;
		r->pos += k;
		if (r->pos == r->cap) {
			r->pos = 0;
			r->wrapped = true;
		}
	}
	return true;
}

/* The ring into its file, oldest byte first: a decoder syncs at the first
 * PSB in it (docs/format.md, "wrapped"). */
static void ring_to_file(struct ring *r)
{
	if (r->wrapped)
		outfile_write(r->out, r->buf + r->pos, r->cap - r->pos);
	outfile_write(r->out, r->buf, r->pos);
}

/* start=guest: the writer hands its bytes on where the unit's output
 * region ends (ptwr.drain_at): there a ToPA STOP sets Stopped, or the next
 * entry is found in error (SDM 33.2.7.2), and the trace ends at the packet
 * that reached the end, not a staging buffer later. */
static void guest_drain_point(struct vcpu *v)
{
	uint64_t room = ptunit_room(&v->rt.u);
	v->gen.w.drain_at = room ? v->gen.w.bytes + room : 0;
}

/* start=guest: the packets go through the vCPU's PT unit (ctx): what it
 * takes is the trace; when it stops taking (a STOP region filled, an
 * operational error) the trace is full. */
static bool guest_write(void *ctx, const uint8_t *buf, size_t n)
{
	struct vcpu *v = ctx;
	char msg[600] = "";
	struct strbuf mb;
	sb_init(&mb, msg, sizeof(msg));
	size_t k = grtit_emit(&v->rt, buf, n, &mb);
	outfile_write(&v->trace, buf, k);
	guest_drain_point(v);
	/* a STOP region filled by the last byte taken stops it as well */
	if (k < n || !ptunit_triggered(&v->rt.u)) {
		v->gen.w.full = true;
		if (!v->rt_said) {
			v->rt_said = true;
			if (msg[0])
				fprintf(stderr, "efipt-qemu: %s\n", msg);
			else
				fprintf(stderr, "efipt-qemu: CPU %u: the output stopped (ToPA STOP region "
					"full: IA32_RTIT_STATUS.Stopped) after %" PRIu64 " bytes\n",
					v->index, v->rt.emitted);
		}
	}
	return !v->trace.err;
}

/* A traced instruction runs for the first time since QEMU translated it
 * (ctx: its vCPU, whose packets for every branch before it are written).
 * Where its bytes differ from those last seen there, the change is
 * recorded at the offset of the next packet, after the TNT bits held
 * are written out: every packet before that offset belongs to a branch
 * before the change, every one from it to a branch after it, which is
 * where the decoder can apply it (ptflow_on_position()). */
static void code_seen(void *ctx, const struct pinsn *p)
{
	struct vcpu *v = ctx;
	pthread_mutex_lock(&P.code_lock);
	if (codemap_add(&P.code, p->addr, p->bytes, p->len)) {
		ptwr_flush_tnt(&v->gen.w);
		codelog_add(&P.changes, v->index, v->gen.w.bytes, p->addr, p->bytes, p->len);
	}
	pthread_mutex_unlock(&P.code_lock);
}

/* Several vCPUs: code another CPU changed since v's last instruction is
 * changed for v too, from its instruction about to run on (after
 * infer_exec() took the branch before it): the change goes into v's trace
 * there (codelog_foreign(); docs/format.md, codechanges.bin). */
static void code_catch_up(struct vcpu *v)
{
	if (__atomic_load_n(&P.changes.n, __ATOMIC_ACQUIRE) == v->chg_seen)
		return;
	pthread_mutex_lock(&P.code_lock);
	if (codelog_foreign(&P.changes, v->index, &v->chg_seen)) {
		ptwr_flush_tnt(&v->gen.w);
		codelog_copy_foreign(&P.changes, v->index, &v->chg_seen, v->gen.w.bytes);
	}
	pthread_mutex_unlock(&P.code_lock);
}

/* The trace, the code, an empty image list and the manifest, once. */
static void finish(const char *why)
{
	pthread_mutex_lock(&P.lock);
	if (P.finished) {
		pthread_mutex_unlock(&P.lock);
		return;
	}
	__atomic_store_n(&P.finished, true, __ATOMIC_RELEASE);
	P.stopped_by = why;
	char err[4400] = "", werr[4400] = "";
	int rc = 0;
	bool wfail = false;	/* a trace could not be written: the run says so */
	/* "traces" entries of the manifest: CPU 0, then every other CPU
	 * that wrote a trace (one that never ran has none) */
	char traces[4096] = "";
	size_t tl = 0;
	unsigned ntraces = 0;
	for (unsigned c = 0; c < P.ncpus; c++) {
		struct vcpu *v = &P.cpu[c];
		/* a callback still running on it ends first; later ones see
		 * finished() */
		pthread_mutex_lock(&v->lock);
		bool on = P.guest && ptunit_triggered(&v->rt.u) && v->inf.tracing;
		infer_finish(&v->inf);
		ptgen_flush(&v->gen);
		pthread_mutex_unlock(&v->lock);
		if (on)
			fprintf(stderr, "efipt-qemu: CPU %u: IA32_RTIT_CTL.TraceEn was still set when "
				"QEMU exited: the trace ends after the last instruction that ran "
				"(FUP, TIP.PGD), as if TraceEn were cleared there\n", c);
		if (v->ring.buf)
			ring_to_file(&v->ring);
		if (c && !v->gen.w.bytes) {
			outfile_abort(&v->trace);
			continue;
		}
		uint64_t tsize = v->trace.size;
		if (outfile_commit(&v->trace, err, sizeof(err))) {
			/* never a part of a trace presented as one: the file is
			 * gone, the manifest says why */
			note_file_status(v->name, 0, errno_name(v->trace.err));
			if (!wfail)
				snprintf(werr, sizeof(werr), "%s (CPU %u's trace: %" PRIu64 " bytes)", err,
					 c, v->gen.w.bytes);
			wfail = true;
			continue;
		}
		note_file(NULL, v->name, tsize);
		ntraces++;
		if (tl + 200 < sizeof(traces))
			tl += (size_t)snprintf(traces + tl, sizeof(traces) - tl,
					       "%s{\"cpu\": %u, \"file\": \"%s\", \"bytes\": %" PRIu64
					       ", \"insns\": %" PRIu64 ", \"first_ip\": \"0x%" PRIx64
					       "\", \"first_call\": %" PRIu64 ", \"end_ip\": \"0x%" PRIx64
					       "\"}",
					       tl ? ", " : "", c, v->name, tsize, v->inf.traced,
					       v->inf.first_ip, v->inf.first_call, v->inf.end_ip);
	}
	if (!rc && P.dbg.open) {
		pthread_mutex_lock(&P.dbg_lock);
		dbgport_flush(&P.dbg);
		uint64_t n = P.dbg.out.size;
		rc = outfile_commit(&P.dbg.out, err, sizeof(err));
		P.dbg.open = false;
		pthread_mutex_unlock(&P.dbg_lock);
		if (!rc)
			note_file(NULL, "debugport.jsonl", n);
	}
	char vec_json[512];
	uint64_t struck = 0;
	for (unsigned c = 0; c < P.ncpus; c++)
		struck += P.cpu[c].struck;
	idt_manifest(&P.idt, P.vectors, struck, vec_json, sizeof(vec_json));
	if (!rc && P.idt.open) {
		pthread_mutex_lock(&P.idt.lock);
		uint64_t n = P.idt.out.size;
		rc = outfile_commit(&P.idt.out, err, sizeof(err));
		P.idt.open = false;
		pthread_mutex_unlock(&P.idt.lock);
		if (!rc)
			note_file(NULL, "interrupts.jsonl", n);
	}
	static char guest_json[1 << 20];	/* 4096 regions fit */
	struct strbuf gj;
	sb_init(&gj, guest_json, sizeof(guest_json));
	if (!rc && P.guest) {
		sb_printf(&gj, "{\"cpuid\": \"");
		sb_json_escape(&gj, P.opt.cpuid);
		sb_printf(&gj, "\", \"maxphyaddr\": %u, \"log\": \"rtit.jsonl\", \"regions_file\": "
			       "\"guest-output.bin\", \"cpus\": [", P.caps.maxphyaddr);
		for (unsigned c = 0; c < P.ncpus; c++) {
			if (c && !P.cpu[c].rt.writes)
				continue;
			if (c)
				sb_puts(&gj, ", ");
			grtit_json(&P.cpu[c].rt, &gj);
		}
		sb_puts(&gj, "]}");
		pthread_mutex_lock(&P.rtlog_lock);
		uint64_t n = P.rtlog.size;
		rc = outfile_commit(&P.rtlog, err, sizeof(err));
		pthread_mutex_unlock(&P.rtlog_lock);
		if (!rc)
			note_file(NULL, "rtit.jsonl", n);
		/* every region at its full size, the unwritten part zero (sparse) */
		if (!rc && P.gout.f && ftruncate(fileno(P.gout.f), (off_t)P.gout_size) && !P.gout.err)
			P.gout.err = errno;
		if (!rc && !(rc = outfile_commit(&P.gout, err, sizeof(err))))
			note_file(NULL, "guest-output.bin", P.gout_size);
	}
	if (!rc)
		rc = codemap_write(&P.code, P.opt.dir, "QemuCode", note_file, NULL, err, sizeof(err));
	if (!rc) {
		/* mode=wrap: the file holds the last bytes of each trace */
		uint64_t *drop = calloc(P.ncpus, sizeof(*drop));
		for (unsigned c = 0; drop && c < P.ncpus; c++)
			if (P.cpu[c].ring.buf)
				drop[c] = P.cpu[c].gen.w.bytes - P.cpu[c].trace.size;
		if (!drop) {
			snprintf(err, sizeof(err), "out of memory");
			rc = -1;
		} else {
			rc = codelog_write(&P.changes, P.opt.dir, drop, P.ncpus, note_file, NULL, err,
					   sizeof(err));
		}
		free(drop);
	}
	if (!rc) {
		struct outfile o;
		rc = outfile_open(&o, P.opt.dir, "images.json", err, sizeof(err));
		if (!rc) {
			outfile_printf(&o, "{\"images\": []}\n");
			uint64_t n = o.size;
			rc = outfile_commit(&o, err, sizeof(err));
			if (!rc)
				note_file(NULL, "images.json", n);
		}
	}
	char msg[256];
	struct vcpu *v0 = &P.cpu[0];
	bool failed = P.code.failed || P.changes.failed || !v0->gen.w.bytes || wfail;
	if (!rc) {
		char sbuf[32];
		snprintf(msg, sizeof(msg), "%" PRIu64 " instructions traced (emulated by QEMU)",
			 v0->inf.traced);
		if (P.code.failed || P.changes.failed)
			snprintf(msg, sizeof(msg), "out of memory: code of some instructions missing");
		if (wfail)
			snprintf(msg, sizeof(msg), "the trace could not be written: %s", werr);
		else if (!v0->gen.w.bytes && P.guest) /* the guest never set TraceEn */
			snprintf(msg, sizeof(msg), "tracing never started: the guest set no "
				 "IA32_RTIT_CTL.TraceEn with TriggerEn in %" PRIu64 " instructions "
				 "(%" PRIu64 " WRMSRs to the PT MSRs, %" PRIu64 " of them #GP)",
				 v0->inf.executed, v0->rt.writes, v0->rt.gp);
		else if (!v0->gen.w.bytes) /* nothing at all: not even a TIP.PGE */
			snprintf(msg, sizeof(msg), "tracing never started: start=%s was not reached "
				 "in %" PRIu64 " instructions", options_start_name(&P.opt, sbuf,
				 sizeof(sbuf)), v0->inf.executed);
		struct manifest_facts mf = {
			.opt = &P.opt, .inf = &v0->inf, .gen = &v0->gen, .code = &P.code,
			.code_records = P.changes.n, .code_copies = codelog_copies(&P.changes),
			.cpus = ntraces, .traces = traces,
			.started = P.started, .stopped_by = P.stopped_by, .files = P.files,
			.result = failed ? "failed" : "ok", .message = msg,
			.wrapped = v0->ring.wrapped, .bytes = v0->trace.size,
			.tsc_start = v0->inf.first_call << P.opt.timing.shift,
			.tsc_stop = v0->inf.end_call << P.opt.timing.shift,
			.dbg = &P.dbg, .dbg_unread = P.dbg_unread, .dbg_dropped = v0->dq.dropped,
			.guest_json = P.guest && !gj.truncated ? guest_json : NULL,
			.guest_ctl = v0->rt.u.ctl,
			.vectors_json = vec_json,
		};
		rc = manifest_write(&mf, err, sizeof(err));
	}
	if (rc) {
		if (wfail)
			fprintf(stderr, "efipt-qemu: %s\n", werr);
		fprintf(stderr, "efipt-qemu: %s\n", err);
		/* a run directory without manifest.json says it did not finish */
	} else if (failed) {
		fprintf(stderr, "efipt-qemu: %s\n", msg);
	}
	pthread_mutex_unlock(&P.lock);
}

/* CPU c's trace reached its stop condition: CPU 0's ends every trace */
static void stopped(unsigned c)
{
	if (c)
		return; /* its infer is done: the rest of its run is not traced */
	struct infer *f = &P.cpu[0].inf;
	finish(f->full ? "full" : f->traced >= P.opt.cfg.limit && P.opt.cfg.limit ? "limit" : "stop");
	if (P.opt.exit_at_stop && !P.exiting)
		exit(0); /* QEMU's atexit work runs; the trace is complete */
}

/* The registers infer.c uses, now (in a callback that may read them). */
static struct infer_regs read_regs(struct vcpu *v)
{
	struct infer_regs r;
	memset(&r, 0, sizeof(r));
	r.valid = v->regs.found && papi_reg(&v->regs, PAPI_CR0, &r.cr0) &&
		  papi_reg(&v->regs, PAPI_EFER, &r.efer) &&
		  papi_reg(&v->regs, PAPI_EFLAGS, &r.eflags) && papi_reg(&v->regs, PAPI_CR3, &r.cr3);
	return r;
}

/*
 * The block at addr about to run after last, a near RET, indirect
 * JMP/CALL or Jcc (now: the registers, read at addr when fresh, else read
 * here once addr is known to be a handler): is addr a handler the branch
 * was interrupted into? Then QEMU delivered an interrupt (or a fault)
 * between the branch and its target, and the handler's frame holds the
 * target (infer_regs.struck): for a Jcc, whether it was taken. Needs the
 * IDT (plugin API 4, regs=on).
 */
static void check_struck(struct vcpu *v, struct infer_regs *now, const struct pinsn *last,
			 uint64_t addr, bool fresh)
{
	now->struck = false;
	if (!v->inf.tracing) {
		v->idt_fresh = false;
		return;
	}
	/* the gates as they are when tracing starts: firmware may have
	 * written them after its LIDT, and no traced event has told yet */
	if (!v->idt_fresh) {
		v->idt.handlers_size = 0;
		v->idt_fresh = true;
	}
	if (!P.vectors || !last || !v->idt.known)
		return;
	bool branch = false;
	for (int m = X86_MODE_16; m <= X86_MODE_64; m++)
		if (last->modes & PINSN_MODE_BIT(m) &&
		    (last->iclass[m] == X86_IC_RET_NEAR || last->iclass[m] == X86_IC_JMP_INDIRECT ||
		     last->iclass[m] == X86_IC_CALL_INDIRECT || last->iclass[m] == X86_IC_JCC))
			branch = true;
	/* CR0 and EFER as last read: a near branch changes neither */
	if (!branch || !idt_is_handler(&v->idt, now->cr0, now->efer, addr))
		return;
	if (!fresh)
		*now = read_regs(v); /* RSP, and the registers at the handler */
	uint64_t cr0 = now->cr0, efer = now->efer, rsp, ip;
	if (!now->valid)
		return;
	const char *why;
	int vec = idt_vector(&v->idt, cr0, efer, addr, &why);
	if (papi_reg(&v->regs, PAPI_RSP, &rsp) && idt_frame_ip(cr0, efer, rsp, vec, &ip)) {
		now->struck = true;
		now->struck_ip = ip;
		v->struck++;
	}
}

/*
 * Can CR0, EFER, EFLAGS.VM or CR3 differ at the block at addr from what
 * they were at the start of t, of which k instructions ran? Only where t
 * ran to its end, on a near branch (in every code size its lengths allow)
 * that went to addr: a near branch changes none of them, and anything
 * else (a far transfer, IRET, INT, MOV to a control register, WRMSR,
 * another instruction QEMU ends a block after, an event) may. An event
 * right after a near indirect branch or RET is not seen here: in firmware
 * it enters a handler in the same mode with the same CR3. Reading the
 * registers at every block would double QEMU's time.
 */
static bool regs_may_change(const struct tbinfo *t, uint64_t k, uint64_t addr)
{
	if (!t || !t->n || k != t->n)
		return true;
	const struct pinsn *p = &t->insn[t->n - 1];
	for (int m = X86_MODE_16; m <= X86_MODE_64; m++) {
		if (!(p->modes & PINSN_MODE_BIT(m)))
			continue;
		switch (p->iclass[m]) {
		case X86_IC_JCC:
			if (addr != p->addr + p->len && addr != p->target[m])
				return true;
			break;
		case X86_IC_JMP_DIRECT:
		case X86_IC_CALL_DIRECT:
			if (addr != p->target[m])
				return true;
			break;
		case X86_IC_JMP_INDIRECT:
		case X86_IC_CALL_INDIRECT:
		case X86_IC_RET_NEAR:
			break;
		default:
			return true;
		}
	}
	return false;
}

/* Instructions 0..k-1 of the block that ran last on the only CPU (its
 * lock held). True when the trace stopped. */
static bool feed_last_tb(struct vcpu *v)
{
	const struct tbinfo *t = v->last_tb;
	if (!t)
		return false;
	uint64_t k = papi_counter_get(&P.insn_started, 0) - v->last_tb_start;
	if (k > t->n)
		k = t->n;
	v->last_tb = NULL;
	infer_block_regs(&v->inf, &v->last_tb_regs);
	return infer_exec_run(&v->inf, t->insn, (size_t)k, t->straight);
}

/* start=guest: the packet settings the guest programmed, from TraceEn on
 * (SDM 33.2.8.2): DisRETC, DisTNT, PSBFreq, TSCEn/MTCEn/CYCEn and their
 * frequencies, ADDRn_CFG=1 ranges (IP filtering). CPL is taken as 0 (the
 * firmware's): OS=0 traces nothing (ContextEn 0); User is moot; CR3
 * filtering compares CR3 at TraceEn. What is not modelled is said. */
static void guest_settings(struct vcpu *v, uint64_t cr3)
{
	const struct ptunit *u = &v->rt.u;
	uint64_t ctl = u->ctl;
	struct infer_config *c = &v->inf.cfg;
	v->gen.w.retcomp = !(ctl & RTIT_CTL_DISRETC);
	v->gen.w.distnt = ctl & RTIT_CTL_DISTNT;
	if (P.caps.psb_cyc)
		v->gen.w.psb_period = 2048u << ((ctl & RTIT_CTL_PSBFREQ_MASK) >> RTIT_CTL_PSBFREQ_SHIFT);
	struct ptgen_timing t = P.opt.timing;
	t.tsc = ctl & RTIT_CTL_TSCEN;
	t.mtc = ctl & RTIT_CTL_MTCEN;
	t.mtc_freq = (uint8_t)((ctl & RTIT_CTL_MTCFREQ_MASK) >> RTIT_CTL_MTCFREQ_SHIFT);
	t.cyc = ctl & RTIT_CTL_CYCEN;
	t.cyc_thresh = (uint8_t)((ctl & RTIT_CTL_CYCTHRESH_MASK) >> RTIT_CTL_CYCTHRESH_SHIFT);
	ptgen_set_timing(&v->gen, &t, &v->inf.calls);
	c->nfilter = 0;
	const char *unmodelled = NULL;
	for (unsigned i = 0; i < 4 && i < PTUNIT_RANGES; i++) {
		unsigned cfg = (unsigned)((ctl >> RTIT_CTL_ADDR_CFG_SHIFT(i)) & 0xf);
		if (cfg == 1) {
			c->filter_a[c->nfilter] = u->addr_a[i];
			c->filter_b[c->nfilter] = u->addr_b[i];
			c->nfilter++;
		} else if (cfg == 2) {
			unmodelled = "TraceStop ranges (ADDRn_CFG=2)";
		}
	}
	bool context = ctl & RTIT_CTL_OS;
	if ((ctl & RTIT_CTL_CR3FILTER) && (cr3 & ~0xfffull) != (u->cr3 & ~0xfffull))
		context = false;
	if (!(ctl & RTIT_CTL_BRANCHEN))
		unmodelled = "BranchEn=0 (traced as BranchEn=1)";
	if (ctl & (RTIT_CTL_PTWEN | RTIT_CTL_PWREVTEN | RTIT_CTL_EVENTEN))
		unmodelled = "PTWRITE, power event and event trace packets";
	if (!context) {
		/* ContextEn 0 everywhere: an empty range */
		c->nfilter = 1;
		c->filter_a[0] = 1;
		c->filter_b[0] = 0;
	}
	if (unmodelled)
		fprintf(stderr, "efipt-qemu: CPU %u: IA32_RTIT_CTL 0x%" PRIx64 ": %s not emulated\n",
			v->index, ctl, unmodelled);
}

/* start=guest, after the WRMSR was fed (on_insn()): what it traced went
 * out under the old programming, now the write takes effect. */
static void guest_wrmsr_done(struct vcpu *v)
{
	v->pend = false;
	ptgen_flush(&v->gen);
	char line[700] = "", msg[700] = "";
	struct strbuf lb, mb;
	sb_init(&lb, line, sizeof(line));
	sb_init(&mb, msg, sizeof(msg));
	enum grtit_edge e = grtit_wrmsr(&v->rt, v->pend_ip, v->pend_msr, v->pend_value, &lb, &mb);
	guest_drain_point(v);
	if (line[0]) {
		pthread_mutex_lock(&P.rtlog_lock);
		outfile_printf(&P.rtlog, "%s\n", line);
		pthread_mutex_unlock(&P.rtlog_lock);
	}
	if (msg[0])
		fprintf(stderr, "efipt-qemu: %s\n", msg);
	if (e == GRTIT_ON)
		v->rt_said = false; /* a stop of this span is said again */
	if (e == GRTIT_ON && (!v->inf.done || v->inf.full)) {
		guest_settings(v, v->pend_cr3);
		infer_guest_on(&v->inf);
	}
}

/* start=guest: before a WRMSR runs (registered before on_insn()): ECX and
 * EDX:EAX. A write clearing TraceEn stops the trace before the WRMSR
 * (FUP(CLIP), TIP.PGD()), so it is told to the inference before on_insn()
 * feeds it; the unit takes the write after. */
static void on_wrmsr(unsigned int vcpu, void *ud)
{
	const struct pinsn *p = ud;
	if (vcpu >= P.ncpus)
		return;
	struct vcpu *v = &P.cpu[vcpu];
	uint64_t rcx, rax, rdx;
	pthread_mutex_lock(&v->lock);
	if (!finished() && papi_reg(&v->regs, PAPI_RCX, &rcx) && papi_reg(&v->regs, PAPI_RAX, &rax) &&
	    papi_reg(&v->regs, PAPI_RDX, &rdx) && ptunit_msr_name((uint32_t)rcx)) {
		v->pend = true;
		v->pend_ip = p->addr;
		v->pend_msr = (uint32_t)rcx;
		v->pend_value = (rdx & 0xffffffffull) << 32 | (rax & 0xffffffffull);
		papi_reg(&v->regs, PAPI_CR3, &v->pend_cr3);
		/* TraceEn 1 -> 0 unless the write would #GP */
		struct ptunit try = v->rt.u;
		char why[300];
		struct strbuf wb;
		sb_init(&wb, why, sizeof(why));
		if ((v->rt.u.ctl & RTIT_CTL_TRACEEN) && v->pend_msr == MSR_IA32_RTIT_CTL &&
		    ptunit_wrmsr(&try, v->pend_msr, v->pend_value, NULL, &wb) == PTUNIT_OK &&
		    !(try.ctl & RTIT_CTL_TRACEEN))
			infer_guest_off(&v->inf);
	}
	pthread_mutex_unlock(&v->lock);
}

/* WRMSR (0F 30) after prefixes */
static bool is_wrmsr(const struct pinsn *p)
{
	unsigned i = 0;
	while (i < p->len && (p->bytes[i] == 0x66 || p->bytes[i] == 0x67 || p->bytes[i] == 0xf2 ||
			      p->bytes[i] == 0xf3 || p->bytes[i] == 0x2e || p->bytes[i] == 0x3e ||
			      p->bytes[i] == 0x26 || p->bytes[i] == 0x36 || p->bytes[i] == 0x64 ||
			      p->bytes[i] == 0x65 || (p->bytes[i] & 0xf0) == 0x40))
		i++;
	return i + 2 == p->len && p->bytes[i] == 0x0f && p->bytes[i + 1] == 0x30;
}

static void on_insn(unsigned int vcpu, void *ud)
{
	if (vcpu >= P.ncpus)
		return;
	struct vcpu *v = &P.cpu[vcpu];
	struct pinsn *p = ud;
	bool stop = false;
	pthread_mutex_lock(&v->lock);
	if (!finished()) { /* nothing after the files are written */
		struct infer_regs now;
		if (p->flags & PINSN_FIRST) {
			now = read_regs(v);
			/* the instruction before: the last block's, or fed */
			const struct tbinfo *t = P.per_insn ? NULL : v->last_tb;
			uint64_t k = t ? papi_counter_get(&P.insn_started, 0) - v->last_tb_start : 0;
			check_struck(v, &now, t ? (k == t->n && k ? &t->insn[k - 1] : NULL)
						: v->inf.prev, p->addr, true);
		}
		if (!P.per_insn)
			stop = feed_last_tb(v); /* the block before, if it ran with a count */
		if (p->flags & PINSN_FIRST)
			infer_block_regs(&v->inf, &now);
		if (!stop)
			stop = infer_exec(&v->inf, p);
		if (!stop && P.ncpus > 1)
			code_catch_up(v);
		if (v->pend)
			guest_wrmsr_done(v);
	}
	pthread_mutex_unlock(&v->lock);
	if (stop)
		stopped(vcpu);
}

static void on_tb(unsigned int vcpu, void *ud)
{
	if (vcpu != 0)
		return;
	struct vcpu *v = &P.cpu[0];
	bool stop = false;
	pthread_mutex_lock(&v->lock);
	if (!finished()) {
		/* the registers before the block runs, where they can have changed */
		const struct tbinfo *t = ud;
		uint64_t k = papi_counter_get(&P.insn_started, 0) - v->last_tb_start;
		struct infer_regs now = v->last_tb_regs;
		uint64_t addr = t->n ? t->insn[0].addr : 0;
		const struct pinsn *last = v->last_tb && k == v->last_tb->n && k ?
					   &v->last_tb->insn[k - 1] : NULL;
		bool fresh = P.regs && regs_may_change(v->last_tb, k, addr);
		if (fresh)
			now = read_regs(v);
		check_struck(v, &now, last, addr, fresh);
		stop = feed_last_tb(v);
		v->last_tb = ud;
		v->last_tb_regs = now;
		v->last_tb_start = papi_counter_get(&P.insn_started, 0);
	}
	pthread_mutex_unlock(&v->lock);
	if (stop)
		stopped(0);
}

/* The inference reached an OUT to the debug port (infer.watch_call): its
 * bytes into the file at the instruction's place in the trace. */
static void on_watch(void *ctx, uint64_t index, bool traced)
{
	struct vcpu *v = ctx;
	const struct dbgport_out *o = dbgport_head(&v->dq);
	uint64_t call = o ? o->call : 0;
	pthread_mutex_lock(&P.dbg_lock);
	for (; o && o->call == call; o = dbgport_head(&v->dq)) {
		dbgport_record(&P.dbg, v->index, traced ? index : UINT64_MAX, o->ip, o->bytes, o->n);
		dbgport_pop(&v->dq);
	}
	pthread_mutex_unlock(&P.dbg_lock);
	v->inf.watch_call = o ? o->call : 0;
}

/* Before an OUT or OUTS runs: if DX is the debug port, its bytes, until the
 * inference reaches the instruction (callbacks run before the instruction,
 * each REP iteration on its own). */
static void on_out(unsigned int vcpu, void *ud)
{
	const struct out_site *s = ud;
	if (vcpu >= P.ncpus)
		return;
	struct vcpu *v = &P.cpu[vcpu];
	pthread_mutex_lock(&v->lock);
	uint64_t dx = 0, val, cx = 1, si;
	unsigned size = s->size[v->inf.mode];
	struct dbgport_out o;
	memset(&o, 0, sizeof(o));
	if (s->port >= 0)
		dx = (uint64_t)s->port;
	if (finished() || !size || (s->port < 0 && !papi_reg(&v->regs, PAPI_RDX, &dx)) ||
	    (dx & 0xffff) != P.opt.debugport)
		goto out;
	o.ip = s->t->insn[s->i].addr;
	/* its execution callback's number: after on_insn counted it, or after
	 * the blocks fed so far and the ones before it in this block */
	o.call = s->t->per_insn ? v->inf.calls : v->inf.calls + s->i + 1;
	if (!s->string) {
		if (!papi_reg(&v->regs, PAPI_RAX, &val))
			goto out;
		for (unsigned k = 0; k < size; k++)
			o.bytes[k] = (uint8_t)(val >> 8 * k);
		o.n = (uint8_t)size;
		if (dbgport_push(&v->dq, &o) && v->dq.len == 1)
			v->inf.watch_call = o.call;
		goto out;
	}
	/* OUTS: RCX iterations (ECX outside 64-bit code) from RSI, read now,
	 * before the instruction runs; DF=1 (backwards) is not followed */
	if (s->rep && papi_reg(&v->regs, PAPI_RCX, &cx) && v->inf.mode != X86_MODE_64)
		cx &= 0xffffffff;
	if (!cx || !papi_reg(&v->regs, PAPI_RSI, &si))
		goto out;
	if (s->rep && o.ip == v->dq.rep_ip && si > v->dq.rep_from && si < v->dq.rep_to &&
	    si + cx * size == v->dq.rep_to)
		goto out; /* the same REP OUTS going on: RSI and RCX moved on together */
	uint64_t total = cx * size > DBGPORT_TEXT ? DBGPORT_TEXT : cx * size;
	v->dq.rep_ip = s->rep ? o.ip : 0;
	v->dq.rep_from = si;
	v->dq.rep_to = si + total;
	for (uint64_t done = 0; done < total; done += o.n) {
		o.n = (uint8_t)(total - done < DBGPORT_CHUNK ? total - done : DBGPORT_CHUNK);
		if (!papi_read_memory(si + done, o.bytes, o.n)) {
			P.dbg_unread += total - done; /* plugin API < 4: no guest memory */
			break;
		}
		if (dbgport_push(&v->dq, &o) && v->dq.len == 1)
			v->inf.watch_call = o.call;
	}
out:
	pthread_mutex_unlock(&v->lock);
}

/* An event (interrupt, exception, INT n) the inference traced: its vector
 * from the IDT (idt.h) into interrupts.jsonl. Called while the block after
 * the handler's first is fed: the IDT and the APIC are read then. */
static void on_event(void *ctx, uint64_t index, uint64_t ip, uint64_t handler)
{
	struct vcpu *v = ctx;
	const char *why = "the registers at the handler were not read";
	int vec = -1;
	if (v->inf.regs.valid)
		vec = idt_vector(&v->idt, v->inf.regs.cr0, v->inf.regs.efer, handler, &why);
	if (vec >= 0)
		idt_seen_handler(&v->idt, handler);
	idt_record(&P.idt, v->index, index, ip, handler, vec, why, idt_apic_timer_vector());
}

/* Before an LIDT runs: the IDTR it loads (idt.h). */
static void on_lidt(unsigned int vcpu, void *ud)
{
	const struct pinsn *p = ud;
	if (vcpu >= P.ncpus)
		return;
	struct vcpu *v = &P.cpu[vcpu];
	uint64_t cr0 = 0, efer = 0;
	pthread_mutex_lock(&v->lock);
	if (papi_reg(&v->regs, PAPI_CR0, &cr0) && papi_reg(&v->regs, PAPI_EFER, &efer))
		idt_lidt(&v->idt, p->bytes, p->len, p->addr, cr0, efer);
	else
		v->idt.unread++;
	pthread_mutex_unlock(&v->lock);
}

/* Callbacks for the OUTs and OUTSs of a block (plugin API 2 on: they read
 * registers), which then is no straight run (infer_exec_run()). */
static void watch_outs(struct tbinfo *t, struct qemu_plugin_tb *tb)
{
	if (!P.regs || !P.opt.debugport)
		return;
	for (size_t i = 0; i < t->n; i++) {
		struct pinsn *p = &t->insn[i];
		struct out_site s = { t, i, { 0 }, -1, false, false };
		unsigned any = 0;
		for (int m = X86_MODE_16; m <= X86_MODE_64; m++)
			if (p->modes & PINSN_MODE_BIT(m))
				any |= s.size[m] = (uint8_t)dbgport_out_size(p->bytes, p->len,
									   (unsigned)m, &s.port,
									   &s.string, &s.rep);
		if (!any)
			continue;
		struct out_site *copy = malloc(sizeof(*copy));
		if (!copy)
			continue;
		*copy = s;
		t->straight = false;
		qemu_plugin_register_vcpu_insn_exec_cb(qemu_plugin_tb_get_insn(tb, i), on_out,
						       papi_cb_flags(true), copy);
	}
}

/* n consecutive struct pinsn */
static struct pinsn *new_pinsns(size_t n)
{
	if (!P.chunk || CHUNK - P.chunk_used < n) {
		P.chunk = calloc(CHUNK, sizeof(*P.chunk));
		P.chunk_used = 0;
		if (!P.chunk)
			return NULL;
	}
	P.chunk_used += n;
	return &P.chunk[P.chunk_used - n];
}

static void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	(void)id;
	size_t n = qemu_plugin_tb_n_insns(tb);
	if (n > 512)
		n = 512; /* QEMU's blocks hold at most 512 instructions */
	unsigned modes = PINSN_MODE_BIT(X86_MODE_16) | PINSN_MODE_BIT(X86_MODE_32) |
			 PINSN_MODE_BIT(X86_MODE_64);
	pthread_mutex_lock(&P.lock);
	struct tbinfo *t = calloc(1, sizeof(*t));
	struct pinsn *pi = t ? new_pinsns(n) : NULL;
	if (!pi) {
		pthread_mutex_unlock(&P.lock);
		free(t);
		return; /* out of memory: this block goes untraced */
	}
	t->n = n;
	t->insn = pi;
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *in = qemu_plugin_tb_get_insn(tb, i);
		uint8_t bytes[16];
		size_t len = papi_insn_bytes(in, bytes);
		modes &= pinsn_init(&pi[i], qemu_plugin_insn_vaddr(in), bytes, (unsigned)len);
	}
	pthread_mutex_unlock(&P.lock);
	/* the code size is the block's: every instruction's length must fit */
	t->straight = modes != 0;
	bool special = false;	/* a marker or a start/stop address */
	for (size_t i = 0; i < n; i++) {
		if (modes)
			pi[i].modes = (uint8_t)modes;
		for (int m = X86_MODE_16; m <= X86_MODE_64; m++)
			if (i + 1 < n && (pi[i].modes & PINSN_MODE_BIT(m)) &&
			    pi[i].iclass[m] != X86_IC_OTHER)
				t->straight = false;
		if ((pi[i].flags & (PINSN_START | PINSN_STOP)) ||
		    (P.opt.cfg.start == INFER_START_ADDR && pi[i].addr == P.opt.cfg.start_addr) ||
		    (P.opt.cfg.stop == INFER_STOP_ADDR && pi[i].addr == P.opt.cfg.stop_addr) ||
		    (P.guest && is_wrmsr(&pi[i])))
			special = true;
		if (i && pi[i].addr != pi[i - 1].addr + pi[i - 1].len)
			t->straight = false;
	}
	/* Where tracing may start or stop, a callback per instruction: the stop
	 * is then seen before the instruction runs (and exit=on ends QEMU
	 * before the guest goes on), not at the next block; a WRMSR under
	 * start=guest is fed (on_insn()) right after on_wrmsr() saw it. */
	bool per_insn = P.per_insn || special;
	t->per_insn = per_insn;
	if (n)
		pi[0].flags |= PINSN_FIRST;
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *in = qemu_plugin_tb_get_insn(tb, i);
		if (P.guest && is_wrmsr(&pi[i]))
			qemu_plugin_register_vcpu_insn_exec_cb(in, on_wrmsr, papi_cb_flags(true),
							       &pi[i]);
		if (per_insn)
			qemu_plugin_register_vcpu_insn_exec_cb(in, on_insn,
							       papi_cb_flags(P.regs && !i), &pi[i]);
		else
			papi_count_insn(&P.insn_started, in);
	}
	watch_outs(t, tb); /* after on_insn: that one counts the execution first */
	for (size_t i = 0; P.vectors && i < n; i++)
		if (idt_is_lidt(pi[i].bytes, pi[i].len))
			qemu_plugin_register_vcpu_insn_exec_cb(qemu_plugin_tb_get_insn(tb, i), on_lidt,
							       papi_cb_flags(true), &pi[i]);
	if (!per_insn)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, on_tb, papi_cb_flags(P.regs), t);
}

/* In the vCPU's context: its register handles */
static void on_vcpu_init(qemu_plugin_id_t id, unsigned int vcpu)
{
	(void)id;
	if (vcpu < P.ncpus && P.regs && !papi_regs_find(&P.cpu[vcpu].regs))
		fprintf(stderr, "efipt-qemu: CPU %u: QEMU names none of cr0, cr3, efer, eflags: "
			"code sizes from instruction lengths only, no PIP\n", vcpu);
	if (vcpu < P.ncpus && P.vectors)
		idt_cpu_init(&P.cpu[vcpu].idt);
}

static void on_qemu_exit(qemu_plugin_id_t id, void *ud)
{
	(void)id;
	(void)ud;
	P.exiting = true;
	/* atexit: no current vCPU, guest memory cannot be read (ToPA entries) */
	for (unsigned c = 0; c < P.ncpus; c++) {
		pthread_mutex_lock(&P.cpu[c].lock);
		P.cpu[c].rt.no_memory = true;
		pthread_mutex_unlock(&P.cpu[c].lock);
	}
	if (!P.per_insn) {
		struct vcpu *v = &P.cpu[0];
		pthread_mutex_lock(&v->lock);
		bool stop = !finished() && feed_last_tb(v);
		pthread_mutex_unlock(&v->lock);
		if (stop)
			stopped(0);
	}
	finish("exit");
}

/* start=guest: the emulated unit's capabilities from cpuid=FILE (as
 * efipt.efi --emulated-caps takes them), rtit.jsonl and guest-output.bin.
 * 0, or -1 with why in err. */
static int guest_setup(char *err, size_t errlen)
{
	if (!PAPI_REGS || !PAPI_MEMORY) {
		snprintf(err, errlen, "start=guest needs QEMU 9.2 or newer (plugin API 4: the "
			 "WRMSR's registers and the guest's ToPA tables); this QEMU's plugin API "
			 "is %d", QEMU_PLUGIN_VERSION);
		return -1;
	}
	FILE *f = fopen(P.opt.cpuid, "r");
	static char text[1 << 20];
	size_t n = f ? fread(text, 1, sizeof(text), f) : 0;
	bool big = f && n == sizeof(text);
	if (f)
		fclose(f);
	if (!f || big) {
		snprintf(err, errlen, "cpuid=%s: %s", P.opt.cpuid,
			 big ? "larger than 1 MiB: not a cpuid -r dump" : strerror(errno));
		return -1;
	}
	static struct cpuid_set set;
	unsigned line = 0;
	int e = cpuidtxt_parse(&set, text, n, 0, &line);
	if (e) {
		snprintf(err, errlen, "cpuid=%s: line %u: %s", P.opt.cpuid, line, cpuidtxt_errstr(e));
		return -1;
	}
	memset(&P.caps, 0, sizeof(P.caps));
	P.caps.maxphyaddr = P.opt.physbits;
	if (!ptcaps_emulate(&P.caps, &set)) {
		snprintf(err, errlen, "cpuid=%s: this CPU profile has no Intel PT "
			 "(CPUID.(EAX=07H,ECX=0):EBX[25] or leaf 14H missing)", P.opt.cpuid);
		return -1;
	}
	if (outfile_open(&P.rtlog, P.opt.dir, "rtit.jsonl", err, errlen))
		return -1;
	if (outfile_open(&P.gout, P.opt.dir, "guest-output.bin", err, errlen)) {
		outfile_abort(&P.rtlog);
		return -1;
	}
	P.guest = true;
	return 0;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	if (strcmp(info->target_name, "x86_64") && strcmp(info->target_name, "i386")) {
		fprintf(stderr, "efipt-qemu: target %s is not x86\n", info->target_name);
		return -1;
	}
	if (!info->system_emulation) {
		fprintf(stderr, "efipt-qemu: needs system emulation (qemu-system-x86_64), not user mode\n");
		return -1;
	}
	if (options_parse(&P.opt, argc, argv))
		return -1;
	if (P.opt.cfg.cr3_filter && !PAPI_REGS) {
		fprintf(stderr, "efipt-qemu: cr3=: CR3 filtering needs QEMU 9.0 or newer (plugin "
			"API 2: registers); this QEMU's plugin API is %d\n", QEMU_PLUGIN_VERSION);
		return -1;
	}
	if (mkdir(P.opt.dir, 0777) && errno != EEXIST) {
		fprintf(stderr, "efipt-qemu: %s: %s\n", P.opt.dir, strerror(errno));
		return -1;
	}
	char old[4200];
	snprintf(old, sizeof(old), "%s/manifest.json", P.opt.dir);
	if (!access(old, F_OK)) {
		/* its files would be mixed with this run's */
		fprintf(stderr, "efipt-qemu: %s already holds a run: give a new dir=\n", P.opt.dir);
		return -1;
	}
	time_t now = time(NULL);
	struct tm tm;
	if (localtime_r(&now, &tm))
		strftime(P.started, sizeof(P.started), "%Y-%m-%dT%H:%M:%S", &tm);
	else
		snprintf(P.started, sizeof(P.started), "unknown");
	char err[4400];
	if (P.opt.cfg.start == INFER_START_GUEST && guest_setup(err, sizeof(err))) {
		fprintf(stderr, "efipt-qemu: %s\n", err);
		return -1;
	}
	codemap_init(&P.code);
	P.ncpus = papi_max_vcpus(info);
	P.cpu = calloc(P.ncpus, sizeof(*P.cpu));
	if (!P.cpu) {
		fprintf(stderr, "efipt-qemu: out of memory for %u vCPUs\n", P.ncpus);
		return -1;
	}
	for (unsigned c = 0; c < P.ncpus; c++) {
		struct vcpu *v = &P.cpu[c];
		pthread_mutex_init(&v->lock, NULL);
		if (c)
			snprintf(v->name, sizeof(v->name), "trace.cpu%u.pt", c);
		else
			snprintf(v->name, sizeof(v->name), "trace.pt");
		v->ring.cap = (size_t)P.opt.size;
		v->ring.out = &v->trace;
		if (P.opt.wrap && !(v->ring.buf = malloc(v->ring.cap))) {
			fprintf(stderr, "efipt-qemu: mode=wrap: no memory for size=%" PRIu64 "\n",
				P.opt.size);
			while (c--)
				outfile_abort(&P.cpu[c].trace);
			return -1;
		}
		if (outfile_open(&v->trace, P.opt.dir, v->name, err, sizeof(err))) {
			fprintf(stderr, "efipt-qemu: %s\n", err);
			while (c--)
				outfile_abort(&P.cpu[c].trace);
			return -1;
		}
		if (P.guest)
			ptgen_init(&v->gen, P.opt.psb, P.opt.retcomp, guest_write, v);
		else if (v->ring.buf)
			ptgen_init(&v->gen, P.opt.psb, P.opt.retcomp, ring_write, &v->ring);
		else
			ptgen_init(&v->gen, P.opt.psb, P.opt.retcomp, trace_write, &v->trace);
		if (!P.opt.wrap)
			v->gen.w.limit = P.opt.size;
		infer_init(&v->inf, &P.opt.cfg, &v->gen);
		/* the emulated clock counts what QEMU's icount counts: every
		 * execution callback, REP iterations included */
		ptgen_set_timing(&v->gen, &P.opt.timing, &v->inf.calls);
		v->inf.code = code_seen;
		v->inf.code_ctx = v;
		v->index = c;
		v->inf.on_watch = on_watch;
		v->inf.watch_ctx = v;
		if (P.guest)
			grtit_init(&v->rt, &P.caps, c, P.gout.f, &P.gout_size);
	}
	/* Several vCPUs: a callback per instruction. Plugin API 2's per-vCPU
	 * inline counts do not serve: without MTTCG (round-robin TCG, which
	 * -icount needs) QEMU 10.0 bakes the translating vCPU's index into a
	 * block that every vCPU then runs, and a -smp 2 OVMF boot with them
	 * ended in a segfault in generated code (tried and dropped). */
	P.per_insn = P.ncpus != 1;
	if (!papi_counter_init(&P.insn_started)) {
		fprintf(stderr, "efipt-qemu: out of memory for the instruction count\n");
		return -1;
	}
	P.regs = P.opt.regs && PAPI_REGS;
	if (P.regs && P.opt.debugport) {
		if (outfile_open(&P.dbg.out, P.opt.dir, "debugport.jsonl", err, sizeof(err))) {
			fprintf(stderr, "efipt-qemu: %s\n", err);
			return -1;
		}
		P.dbg.open = true;
	}
	/* interrupt vectors: registers and guest memory (the IDT) */
	P.vectors = P.regs && PAPI_MEMORY;
	P.idt.timer_vector = -1;
	pthread_mutex_init(&P.idt.lock, NULL);
	if (P.vectors) {
		if (outfile_open(&P.idt.out, P.opt.dir, "interrupts.jsonl", err, sizeof(err))) {
			fprintf(stderr, "efipt-qemu: %s\n", err);
			return -1;
		}
		P.idt.open = true;
		for (unsigned c = 0; c < P.ncpus; c++) {
			P.cpu[c].inf.on_event = on_event;
			P.cpu[c].inf.event_ctx = &P.cpu[c];
		}
	}
	qemu_plugin_register_vcpu_init_cb(id, on_vcpu_init);
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
	qemu_plugin_register_atexit_cb(id, on_qemu_exit, NULL);
	return 0;
}
