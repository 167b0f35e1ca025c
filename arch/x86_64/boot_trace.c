/* The firmware boot trace's steps; see boot_trace.h and docs/edk2.md. */
#include "arch/x86_64/boot_trace.h"
#include "arch/x86_64/pt_msr.h"
#include "core/mem.h"
#include "core/pt_rtit.h"

/*
 * The synthetic source lays its buffer out as for a CPU with every output
 * scheme (ToPA with many entries, single-range): no PT is programmed, the
 * firmware writes the trace itself, so the CPU's own caps do not matter.
 */
static void synthetic_caps(struct ptcaps *c)
{
	c->absent = PTCAPS_PRESENT;
	c->topa = c->topa_multi = c->single_range = true;
}

void boottrace_put_layout(struct fwtrace_rec *r, const struct ptout *o)
{
	r->nreg = o->nreg;
	r->ntab = o->ntab;
	r->per_table = o->per_table;
	r->msr_base = o->msr_base;
	r->msr_mask = o->msr_mask;
	for (unsigned i = 0; i < o->nreg && i < FWTRACE_MAX_REGIONS; i++)
		r->reg[i] = (struct fwtrace_region){ o->reg[i].base, o->reg[i].size,
						     o->reg[i].table, o->reg[i].entry };
	for (unsigned i = 0; i < o->ntab && i < FWTRACE_MAX_TABLES; i++)
		r->tab[i] = (struct fwtrace_table){ o->tab[i].phys, o->tab[i].first,
						    o->tab[i].nout };
}

/* The validator's notes and other messages go to reason: one line, its
 * parts joined by "; ". */
static void note(struct fwtrace_rec *r, const char *text)
{
	struct strbuf sb;
	size_t n = efipt_strlen(r->reason);
	sb_init(&sb, r->reason + n, sizeof(r->reason) - n);
	if (n && *text && *text != '\n')
		sb_puts(&sb, "; ");
	for (const char *t = text; *t; t++)
		if (*t != '\n' || t[1])
			sb_putc(&sb, *t == '\n' ? ';' : *t);
}

uint32_t boottrace_start(struct fwtrace_rec *rec, struct boottrace_work *w, const char *options,
			 uint32_t flags, const struct cpu_ops *ops, const struct ptout_mem *mem)
{
	return boottrace_start_emulated(rec, w, options, flags, NULL, ops, mem);
}

static bool under_tcg(const struct ptcaps *c)
{
	return !efipt_strcmp(c->hypervisor, "TCGTCGTCGTCG");
}

uint32_t boottrace_start_emulated(struct fwtrace_rec *rec, struct boottrace_work *w,
				  const char *options, uint32_t flags,
				  const struct cpuid_set *profile, const struct cpu_ops *ops,
				  const struct ptout_mem *mem)
{
	efipt_memset(w, 0, sizeof(*w));
	struct strbuf why, msg;
	sb_init(&why, rec->reason, sizeof(rec->reason));
	sb_init(&msg, w->msg, sizeof(w->msg));
	rec->flags = (flags & BOOTTRACE_FROM_VARIABLE) ? FWTRACE_F_VARIABLE : 0;
	fwtrace_put_str(rec->options, sizeof(rec->options), options);
	cpuid_set_capture(&w->cpuid, ops->cpuid, ops->ctx);
	fwtrace_put_cpuid(rec, &w->cpuid);
	ptcaps_parse(&w->caps, &w->cpuid);

	sb_printf(&why, "options from %s: ",
		  (flags & BOOTTRACE_FROM_VARIABLE) ? "the " FWTRACE_VARIABLE_NAME " variable" : "PcdEfiptOptions");
	if (fwtrace_parse_options(&w->opts, options, &why))
		return rec->status = FWTRACE_BAD_OPTIONS;
	sb_reset(&why);
	rec->stop_at = w->opts.stop_at;
	rec->source = w->opts.source;
	if (w->opts.into_os)
		rec->flags |= FWTRACE_F_INTO_OS;
	if (w->opts.off) {
		sb_puts(&why, "not traced: --off");
		return rec->status = FWTRACE_OFF;
	}
	if (rec->source == FWTRACE_SRC_SYNTHETIC && !(flags & BOOTTRACE_SYNTHETIC)) {
		sb_puts(&why, "--source synthetic: this firmware was built without it "
			      "(PcdEfiptSynthetic, test builds only)");
		return rec->status = FWTRACE_REFUSED;
	}
	if (profile && rec->source == FWTRACE_SRC_HW && w->caps.absent != PTCAPS_PRESENT &&
	    under_tcg(&w->caps) && ptcaps_emulate(&w->caps, profile)) {
		/* the record's CPUID is what collect and the APs validate against */
		rec->flags |= FWTRACE_F_EMULATED;
		fwtrace_put_cpuid(rec, profile);
		sb_puts(&why, "EMULATED Intel PT (QEMU TCG, a CPU profile's capabilities)");
	}
	if (rec->source == FWTRACE_SRC_SYNTHETIC) {
		synthetic_caps(&w->caps);
		sb_puts(&why, "SYNTHETIC trace (no Intel PT programmed)");
	} else if (w->caps.absent != PTCAPS_PRESENT) {
		ptcaps_absent_line(&w->caps, &why);
		/* QEMU's TCG emulates no PT; efipt-qemu.so traces between the markers */
		if ((flags & BOOTTRACE_MARKERS) && under_tcg(&w->caps)) {
			sb_puts(&why, "; QEMU TCG: the EPT1/EPT0 trace markers run instead (efipt qemu)");
			rec->flags |= FWTRACE_F_MARKERS;
			rec->tsc_start = ops->rdtsc(ops->ctx);
		}
		return rec->status = FWTRACE_UNSUPPORTED;
	}
	if (ptcfg_validate(&w->opts.cfg, &w->caps, &w->set, &msg)) {
		note(rec, w->msg);
		return rec->status = FWTRACE_REFUSED;
	}
	note(rec, w->msg);
	sb_reset(&msg);
	ptout_init(&w->out, w->reg, FWTRACE_MAX_REGIONS, w->tab, FWTRACE_MAX_TABLES);
	if (ptout_build(&w->out, &w->set, mem, &msg)) {
		char text[sizeof(w->msg) + 20];
		struct strbuf tb;
		sb_init(&tb, text, sizeof(text));
		sb_printf(&tb, "no trace buffer: %s", w->msg);
		note(rec, text);
		return rec->status = FWTRACE_NO_MEMORY;
	}
	fwtrace_put_settings(rec, &w->set);
	boottrace_put_layout(rec, &w->out);
	if (rec->source == FWTRACE_SRC_SYNTHETIC) {
		rec->synth_seed = w->opts.seed;
		rec->synth_insns = w->opts.insns; /* the budget; the truth's count at stop */
		rec->fault = w->opts.fault;
		if (rec->fault == FWTRACE_FAULT_HOB_OUTSIDE_RAM)
			/* aligned for any region, below MAXPHYADDR, but no RAM is there */
			rec->reg[0].base = 1ull << (rec->maxphyaddr - 1);
		rec->tsc_start = ops->rdtsc(ops->ctx);
		return rec->status = FWTRACE_RUNNING;
	}
	rtit_engine_init(&w->eng, ops, &w->caps, &w->set, &w->out, NULL);
	if (rtit_start(&w->eng, &msg) != RTIT_OK) {
		note(rec, w->msg);
		ptout_free(&w->out, mem);
		rec->nreg = rec->ntab = 0;
		return rec->status = FWTRACE_FAILED;
	}
	rec->tsc_start = ops->rdtsc(ops->ctx);
	return rec->status = FWTRACE_RUNNING;
}

static bool has_buffer(const struct fwtrace_rec *r)
{
	return r->status == FWTRACE_RUNNING || r->status == FWTRACE_STOPPED;
}

int boottrace_check_memory(const struct fwtrace_rec *rec, boottrace_mem_fn fn, void *ctx,
			   struct strbuf *why)
{
	if (!has_buffer(rec))
		return 0;
	for (uint32_t i = 0; i < rec->nreg && i < FWTRACE_MAX_REGIONS; i++) {
		uint64_t size = rec->reg[i].size < 4096 ? 4096 : rec->reg[i].size;
		if (!fn(ctx, rec->reg[i].base, size)) {
			sb_printf(why, "trace output region %u at 0x%llx (%llu bytes) is not memory "
				       "reserved for the trace",
				  i, (unsigned long long)rec->reg[i].base, (unsigned long long)size);
			return -1;
		}
	}
	for (uint32_t i = 0; i < rec->ntab && i < FWTRACE_MAX_TABLES; i++)
		if (!fn(ctx, rec->tab[i].phys, 4096)) {
			sb_printf(why, "ToPA table %u at 0x%llx is not memory reserved for the trace", i,
				  (unsigned long long)rec->tab[i].phys);
			return -1;
		}
	return 0;
}

int boottrace_adopt(const struct fwtrace_rec *rec, struct boottrace_work *w,
		    const struct cpu_ops *ops, struct strbuf *why)
{
	efipt_memset(w, 0, sizeof(*w));
	fwtrace_get_cpuid(rec, &w->cpuid);
	ptcaps_parse(&w->caps, &w->cpuid);
	if (rec->source == FWTRACE_SRC_SYNTHETIC)
		synthetic_caps(&w->caps);
	fwtrace_get_settings(rec, &w->set);
	if (!has_buffer(rec))
		return 0;
	if (rec->nreg > FWTRACE_MAX_REGIONS || rec->ntab > FWTRACE_MAX_TABLES) {
		sb_puts(why, "the record's buffer layout was not checked");
		return -1;
	}
	/* Clearing TraceEn from this value is the only write a stop makes
	 * (33.2.8.3): it must be one ptcfg_validate could have made. */
	if (rec->source == FWTRACE_SRC_HW &&
	    (w->caps.absent != PTCAPS_PRESENT || (rec->rtit_ctl & RTIT_CTL_RESERVED) ||
	     (rec->rtit_ctl & RTIT_CTL_TRACEEN) ||
	     !(rec->rtit_ctl & RTIT_CTL_TOPA) != (rec->output == PTCFG_OUT_SINGLE))) {
		sb_printf(why, "IA32_RTIT_CTL 0x%llx in the record is not one efipt programs on this "
			       "CPU", (unsigned long long)rec->rtit_ctl);
		return -1;
	}
	ptout_init(&w->out, w->reg, FWTRACE_MAX_REGIONS, w->tab, FWTRACE_MAX_TABLES);
	w->out.output = (enum ptcfg_output)rec->output;
	w->out.mode = (enum ptcfg_mode)rec->mode;
	w->out.size = rec->buf_size;
	w->out.maxphyaddr = rec->maxphyaddr;
	w->out.multi = rec->topa_multi != 0;
	w->out.per_table = rec->per_table;
	w->out.msr_base = rec->msr_base;
	w->out.msr_mask = rec->msr_mask;
	w->out.nreg = rec->nreg;
	w->out.ntab = rec->ntab;
	for (uint32_t i = 0; i < rec->nreg; i++)
		w->reg[i] = (struct ptout_region){ rec->reg[i].base, rec->reg[i].size,
						   rec->reg[i].table, rec->reg[i].entry };
	for (uint32_t i = 0; i < rec->ntab; i++)
		w->tab[i] = (struct ptout_table){ rec->tab[i].phys, rec->tab[i].first,
						  rec->tab[i].nout };
	rtit_engine_init(&w->eng, ops, &w->caps, &w->set, &w->out, NULL);
	if (rec->status == FWTRACE_STOPPED)
		rtit_adopt_stopped(&w->eng, rec->rtit_ctl, rec->stop_base, rec->stop_mask,
				   rec->stop_status);
	else if (rec->source == FWTRACE_SRC_HW)
		rtit_adopt(&w->eng, rec->rtit_ctl);
	return 0;
}

int boottrace_stop(struct fwtrace_rec *rec, struct boottrace_work *w, uint32_t where,
		   struct strbuf *msg)
{
	const struct cpu_ops *ops = w->eng.ops;
	if ((rec->flags & FWTRACE_F_MARKERS) && rec->status == FWTRACE_UNSUPPORTED) {
		if (rec->stopped_at)
			return 1; /* the stop marker ran already */
		rec->stopped_at = where;
		return 0;
	}
	if (rec->status != FWTRACE_RUNNING) {
		sb_printf(msg, "the trace is %s, not running", fwtrace_status_name(rec->status));
		return -1;
	}
	rec->stopped_at = where;
	rec->status = FWTRACE_STOPPED;
	if (rec->source == FWTRACE_SRC_SYNTHETIC) {
		if (ops)
			rec->tsc_stop = ops->rdtsc(ops->ctx);
		return 0;
	}
	int rc = rtit_stop(&w->eng, msg);
	rec->tsc_stop = ops->rdtsc(ops->ctx);
	if (!w->eng.stopped_valid) {
		/* TraceEn may still be set: nothing read back to find the trace by */
		rec->status = FWTRACE_FAILED;
		return -1;
	}
	rec->stop_base = w->eng.stop_base;
	rec->stop_mask = w->eng.stop_mask;
	rec->stop_status = w->eng.stop_status;
	return rc == RTIT_OK ? 0 : -1;
}

int boottrace_halt(struct boottrace_work *w, const struct cpu_ops *ops)
{
	efipt_memset(w, 0, sizeof(*w));
	cpuid_set_capture(&w->cpuid, ops->cpuid, ops->ctx);
	ptcaps_parse(&w->caps, &w->cpuid);
	if (w->caps.absent != PTCAPS_PRESENT)
		return 0;
	uint64_t ctl;
	if (ops->rdmsr(ops->ctx, MSR_IA32_RTIT_CTL, &ctl))
		return -1;
	if (!(ctl & RTIT_CTL_TRACEEN))
		return 0;
	return ops->wrmsr(ops->ctx, MSR_IA32_RTIT_CTL, ctl & ~RTIT_CTL_TRACEEN) ? -1 : 1;
}

int boottrace_extract(const struct fwtrace_rec *rec, struct boottrace_work *w,
		      const struct ptout_mem *mem, ptout_span_fn fn, void *ctx,
		      struct ptout_extent *ext)
{
	if (rec->status != FWTRACE_STOPPED) {
		efipt_memset(ext, 0, sizeof(*ext));
		return -1;
	}
	return rtit_extract(&w->eng, mem, fn, ctx, ext);
}

uint64_t boottrace_synth_store(struct fwtrace_rec *rec, struct boottrace_work *w,
			       const struct ptout_mem *mem, const uint8_t *bytes, uint64_t len)
{
	const struct ptout *o = &w->out;
	if (len > o->size)
		len = o->size;
	/* regions in the order the CPU fills them, 8 bytes per store */
	uint64_t done = 0;
	for (unsigned i = 0; i < o->nreg && done < len; i++) {
		uint64_t n = o->reg[i].size < len - done ? o->reg[i].size : len - done;
		for (uint64_t k = 0; k < n; k += 8) {
			uint8_t q[8] = { 0 };
			for (unsigned b = 0; b < 8 && k + b < n; b++)
				q[b] = bytes[done + k + b];
			mem->write64(mem->ctx, o->reg[i].base + k, efipt_le64(q));
		}
		done += n;
	}
	/* where the next byte would go (33.2.8.7, 33.2.8.8) */
	unsigned cur = 0;
	uint64_t off = len;
	while (cur + 1 < o->nreg && off >= o->reg[cur].size)
		off -= o->reg[cur++].size;
	uint64_t status = 0;
	if (off >= o->reg[cur].size) {
		if (o->mode == PTCFG_MODE_STOP && o->output == PTCFG_OUT_TOPA) {
			/* ToPA STOP: Stopped set, OutputOffset at size - 1 (33.2.7.2) */
			off = o->reg[cur].size - 1;
			status = RTIT_STATUS_STOPPED;
		} else {
			cur = 0; /* the CPU went round to the start */
			off = 0;
		}
	}
	if (o->output == PTCFG_OUT_SINGLE) {
		rec->stop_base = o->reg[0].base;
		rec->stop_mask = (off << RTIT_MASK_OUTPUT_OFFSET_SHIFT) | (o->size - 1) |
				 RTIT_MASK_LOWER;
	} else {
		rec->stop_base = o->tab[o->reg[cur].table].phys;
		rec->stop_mask = (off << RTIT_MASK_OUTPUT_OFFSET_SHIFT) |
				 ((uint64_t)o->reg[cur].entry << RTIT_MASK_TABLE_OFFSET_SHIFT) |
				 RTIT_MASK_LOWER;
	}
	rec->stop_status = status;
	rec->synth_bytes = len;
	rtit_adopt_stopped(&w->eng, rec->rtit_ctl, rec->stop_base, rec->stop_mask, status);
	return len;
}
