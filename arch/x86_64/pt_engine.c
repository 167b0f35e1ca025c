/* Intel PT enable/disable sequences (SDM 33.3.2); see pt_engine.h. */
#include "arch/x86_64/pt_engine.h"
#include "arch/x86_64/pt_msr.h"
#include "core/mem.h"

void rtit_log_init(struct rtit_log *log, struct rtit_step *steps, unsigned cap)
{
	log->steps = steps;
	log->cap = cap;
	log->n = 0;
	log->truncated = false;
}

static void log_step(struct rtit_engine *e, enum rtit_op op, uint32_t msr, uint64_t value,
		     unsigned table, int fault)
{
	struct rtit_log *log = e->log;
	if (!log)
		return;
	if (log->n >= log->cap) {
		log->truncated = true;
		return;
	}
	log->steps[log->n++] = (struct rtit_step){
		.op = op, .msr = msr, .value = value, .table = table, .fault = fault,
	};
}

static int note_fault(struct rtit_engine *e, uint32_t msr, int r)
{
	if (r && !e->fault) {
		e->fault = r;
		e->fault_msr = msr;
	}
	return r;
}

static int rd(struct rtit_engine *e, uint32_t msr, uint64_t *v)
{
	*v = 0;
	int r = e->ops->rdmsr(e->ops->ctx, msr, v);
	if (!r && msr == MSR_IA32_RTIT_CTL)
		e->rules.ctl = *v; /* firmware may be tracing (--force) */
	log_step(e, RTIT_OP_RDMSR, msr, *v, 0, r);
	return note_fault(e, msr, r);
}

static int wr(struct rtit_engine *e, uint32_t msr, uint64_t v)
{
	/* the CPU's rules once more, the ones efipt-qemu.so checks a guest
	 * against: a value they reject never reaches WRMSR */
	struct strbuf why;
	struct ptunit after = e->rules;
	sb_init(&why, e->refused, sizeof(e->refused));
	if (ptunit_wrmsr(&after, msr, v, NULL, &why) == PTUNIT_GP) {
		log_step(e, RTIT_OP_WRMSR, msr, v, 0, CPU_FAULT_GP);
		return note_fault(e, msr, CPU_FAULT_GP);
	}
	e->refused[0] = 0;
	int r = e->ops->wrmsr(e->ops->ctx, msr, v);
	if (!r)
		e->rules = after;
	log_step(e, RTIT_OP_WRMSR, msr, v, 0, r);
	return note_fault(e, msr, r);
}

const char *rtit_msr_name(uint32_t msr)
{
	return ptunit_msr_name(msr);
}

void rtit_engine_init(struct rtit_engine *e, const struct cpu_ops *ops,
		      const struct ptcaps *caps, const struct ptcfg_settings *set,
		      const struct ptout *out, struct rtit_log *log)
{
	efipt_memset(e, 0, sizeof(*e));
	e->ops = ops;
	e->caps = caps;
	e->set = set;
	e->out = out;
	e->log = log;
	ptunit_init(&e->rules, caps);
}

static bool has_output_msrs(const struct ptcaps *c)
{
	/* 33.2.8.7/8: OUTPUT_BASE and OUTPUT_MASK_PTRS exist with ToPA or single-range. */
	return c->topa || c->single_range;
}

static unsigned ranges_present(const struct ptcaps *c)
{
	unsigned n = c->ip_filter ? c->addr_ranges : 0;
	return n > PTCFG_MAX_RANGES ? PTCFG_MAX_RANGES : n;
}

static int fault_msg(struct rtit_engine *e, struct strbuf *msg, const char *when)
{
	const char *name = rtit_msr_name(e->fault_msr);
	if (e->refused[0]) {
		sb_printf(msg, "%s: not written, it would fault (#GP): %s", when, e->refused);
		return RTIT_FAULT;
	}
	sb_printf(msg, "%s: access to MSR 0x%x%s%s%s faulted (#GP)", when, e->fault_msr,
		  name ? " (" : "", name ? name : "", name ? ")" : "");
	return RTIT_FAULT;
}

/* --force: TraceEn was set by someone else; stop it and keep its settings. */
static int take_over(struct rtit_engine *e, uint64_t ctl)
{
	const struct ptcaps *c = e->caps;
	struct rtit_saved *s = &e->saved;
	s->ctl = ctl;
	/* Clearing TraceEn in the same write is always allowed (33.2.8.3). */
	if (wr(e, MSR_IA32_RTIT_CTL, ctl & ~RTIT_CTL_TRACEEN))
		return -1;
	/* Only now are STATUS and the output MSRs stable (33.3.2.1). */
	if (rd(e, MSR_IA32_RTIT_STATUS, &s->status))
		return -1;
	if (has_output_msrs(c) && (rd(e, MSR_IA32_RTIT_OUTPUT_BASE, &s->base) ||
				   rd(e, MSR_IA32_RTIT_OUTPUT_MASK_PTRS, &s->mask)))
		return -1;
	if (c->cr3_filter && rd(e, MSR_IA32_RTIT_CR3_MATCH, &s->cr3))
		return -1;
	s->nranges = ranges_present(c);
	for (unsigned i = 0; i < s->nranges; i++)
		if (rd(e, MSR_IA32_RTIT_ADDR_A(i), &s->a[i]) ||
		    rd(e, MSR_IA32_RTIT_ADDR_B(i), &s->b[i]))
			return -1;
	s->valid = true;
	e->took_over = true;
	return 0;
}

static int restore(struct rtit_engine *e);

int rtit_start(struct rtit_engine *e, struct strbuf *msg)
{
	const struct ptcfg_settings *set = e->set;
	const struct ptout *out = e->out;
	uint64_t ctl;

	if (e->running) {
		sb_puts(msg, "tracing is already running");
		return RTIT_STATE;
	}
	if (e->caps->absent != PTCAPS_PRESENT || !has_output_msrs(e->caps)) {
		sb_puts(msg, "Intel PT output to memory is not available on this CPU");
		return RTIT_STATE;
	}
	if (!out->nreg || out->output != set->output) {
		sb_puts(msg, "output buffer not built for these settings");
		return RTIT_STATE;
	}
	for (unsigned t = 0; out->output == PTCFG_OUT_TOPA && t < out->ntab; t++)
		log_step(e, RTIT_OP_TOPA, 0, out->tab[t].phys, t, 0);

	if (rd(e, MSR_IA32_RTIT_CTL, &ctl))
		return fault_msg(e, msg, "reading IA32_RTIT_CTL");
	if (ctl & RTIT_CTL_TRACEEN) {
		sb_printf(msg, "Intel PT is already enabled (IA32_RTIT_CTL=0x%llx): firmware or "
			       "another agent is tracing",
			  (unsigned long long)ctl);
		if (!set->force) {
			sb_printf(msg, "; not touching it (use --%s to take over and restore it "
				       "afterwards)", ptcfg_opt_name(PTCFG_OPT_FORCE));
			return RTIT_BUSY;
		}
		sb_printf(msg, "; --%s: taking over, its configuration is restored at stop\n",
			  ptcfg_opt_name(PTCFG_OPT_FORCE));
		if (take_over(e, ctl))
			return fault_msg(e, msg, "saving the active configuration");
	}

	/*
	 * 33.3.2.1: clear STATUS first (Error and Stopped persist from earlier
	 * runs; PacketByteCnt=0 makes TraceEn start with a PSB+, 33.2.8.3), then
	 * the other configuration MSRs, IA32_RTIT_CTL last (writes to the others
	 * #GP while TraceEn=1, 33.2.8.1).
	 */
	const char *step = "programming the output";
	if (wr(e, MSR_IA32_RTIT_STATUS, 0) ||
	    wr(e, MSR_IA32_RTIT_OUTPUT_BASE, out->msr_base) ||
	    wr(e, MSR_IA32_RTIT_OUTPUT_MASK_PTRS, out->msr_mask))
		goto failed;
	step = "programming CR3 filtering";
	if (set->cr3_filter && wr(e, MSR_IA32_RTIT_CR3_MATCH, set->cr3_match))
		goto failed;
	step = "programming address ranges";
	for (unsigned i = 0; i < set->nranges; i++)
		if (wr(e, MSR_IA32_RTIT_ADDR_A(i), set->addr_a[i]) ||
		    wr(e, MSR_IA32_RTIT_ADDR_B(i), set->addr_b[i]))
			goto failed;
	step = "enabling tracing";
	e->ctl = set->ctl | RTIT_CTL_TRACEEN;
	if (wr(e, MSR_IA32_RTIT_CTL, e->ctl))
		goto failed;
	e->running = true;
	e->stopped_valid = false;
	return RTIT_OK;

failed:
	fault_msg(e, msg, step);
	/* Give a configuration taken over with --force back as it was. */
	if (e->took_over && restore(e) == 0)
		sb_puts(msg, "; restored the previous Intel PT configuration");
	return RTIT_FAULT;
}

static int restore(struct rtit_engine *e)
{
	const struct ptcaps *c = e->caps;
	const struct rtit_saved *s = &e->saved;
	/* Same order as an enable: everything else first, IA32_RTIT_CTL last. */
	if (wr(e, MSR_IA32_RTIT_STATUS, s->status & ~RTIT_STATUS_RO))
		return -1;
	if (has_output_msrs(c) && (wr(e, MSR_IA32_RTIT_OUTPUT_BASE, s->base) ||
				   wr(e, MSR_IA32_RTIT_OUTPUT_MASK_PTRS, s->mask)))
		return -1;
	if (c->cr3_filter && wr(e, MSR_IA32_RTIT_CR3_MATCH, s->cr3))
		return -1;
	for (unsigned i = 0; i < s->nranges; i++)
		if (wr(e, MSR_IA32_RTIT_ADDR_A(i), s->a[i]) || wr(e, MSR_IA32_RTIT_ADDR_B(i), s->b[i]))
			return -1;
	return wr(e, MSR_IA32_RTIT_CTL, s->ctl);
}

int rtit_stop(struct rtit_engine *e, struct strbuf *msg)
{
	if (!e->running) {
		sb_puts(msg, "tracing is not running");
		return RTIT_STATE;
	}
	/* Clearing TraceEn flushes the buffered packets (33.2.8.3, 33.3.3). */
	int r = wr(e, MSR_IA32_RTIT_CTL, e->ctl & ~RTIT_CTL_TRACEEN);
	e->running = false;
	if (r)
		return fault_msg(e, msg, "disabling tracing");
	/* WRMSR does not make the flushed stores globally visible by itself
	 * (33.2.7.2 footnote): a fence before anyone reads the buffer. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (rd(e, MSR_IA32_RTIT_OUTPUT_BASE, &e->stop_base) ||
	    rd(e, MSR_IA32_RTIT_OUTPUT_MASK_PTRS, &e->stop_mask) ||
	    rd(e, MSR_IA32_RTIT_STATUS, &e->stop_status))
		return fault_msg(e, msg, "reading back the output state");
	e->stopped_valid = true;
	if (e->stop_status & RTIT_STATUS_ERROR)
		sb_printf(msg, "IA32_RTIT_STATUS.Error=1 (0x%llx): an operational error stopped the "
			       "trace (SDM 33.3.10); the trace is likely incomplete\n",
			  (unsigned long long)e->stop_status);
	if (e->stop_status & RTIT_STATUS_STOPPED)
		sb_printf(msg, "IA32_RTIT_STATUS.Stopped=1: %s\n",
			  e->out->mode == PTCFG_MODE_STOP && e->out->output == PTCFG_OUT_TOPA
				  ? "the buffer filled up (ToPA STOP) or a TraceStop range was hit"
				  : "a TraceStop range was hit");
	if (e->took_over) {
		if (restore(e))
			return fault_msg(e, msg, "restoring the previous configuration");
		sb_puts(msg, "restored the Intel PT configuration found at start\n");
	}
	return RTIT_OK;
}

int rtit_position(struct rtit_engine *e, uint64_t *pos, struct strbuf *msg)
{
	if (!e->running) {
		sb_puts(msg, "tracing is not running");
		return RTIT_STATE;
	}
	/* Read while TraceEn=1, the output MSRs lag behind (Table 33-3:
	 * updates "may not be synchronous to software execution") and packets
	 * may still be buffered in the CPU (33.2.8.2); clearing TraceEn
	 * flushes them and makes the MSRs exact (33.2.8.3). Whatever fails,
	 * the engine stays running: rtit_stop clears TraceEn again (harmless)
	 * and reads the output back. */
	if (wr(e, MSR_IA32_RTIT_CTL, e->ctl & ~RTIT_CTL_TRACEEN))
		return fault_msg(e, msg, "pausing tracing");
	uint64_t base, mask, status;
	int r = rd(e, MSR_IA32_RTIT_OUTPUT_BASE, &base) ||
		rd(e, MSR_IA32_RTIT_OUTPUT_MASK_PTRS, &mask) || rd(e, MSR_IA32_RTIT_STATUS, &status);
	int bad = r || ptout_position(e->out, base, mask, status, pos);
	/* the configuration MSRs are as rtit_start wrote them: TraceEn alone
	 * goes back on and the output goes on where it was (33.2.8.2). Not
	 * after Stopped or Error: nothing more would be traced (TriggerEn
	 * stays 0, 33.2.8.2), and the state stays for rtit_stop to report. */
	bool resume = !r && !(status & (RTIT_STATUS_STOPPED | RTIT_STATUS_ERROR));
	if (resume && wr(e, MSR_IA32_RTIT_CTL, e->ctl))
		return fault_msg(e, msg, "resuming tracing");
	if (r)
		return fault_msg(e, msg, "reading the output position");
	if (bad) {
		sb_printf(msg, "the output MSRs (base 0x%llx, mask 0x%llx) point outside the buffer",
			  (unsigned long long)base, (unsigned long long)mask);
		return RTIT_STATE;
	}
	if (!resume) {
		sb_printf(msg, "IA32_RTIT_STATUS 0x%llx: the trace had stopped (%s)",
			  (unsigned long long)status,
			  status & RTIT_STATUS_ERROR ? "operational error" : "Stopped");
		return RTIT_STATE;
	}
	return RTIT_OK;
}

void rtit_adopt(struct rtit_engine *e, uint64_t ctl)
{
	e->ctl = ctl | RTIT_CTL_TRACEEN;
	e->running = true;
	e->stopped_valid = false;
}

void rtit_adopt_stopped(struct rtit_engine *e, uint64_t ctl, uint64_t base, uint64_t mask,
			uint64_t status)
{
	e->ctl = ctl | RTIT_CTL_TRACEEN;
	e->running = false;
	e->stop_base = base;
	e->stop_mask = mask;
	e->stop_status = status;
	e->stopped_valid = true;
}

int rtit_extract(const struct rtit_engine *e, const struct ptout_mem *mem, ptout_span_fn fn,
	       void *ctx, struct ptout_extent *ext)
{
	if (!e->stopped_valid) {
		efipt_memset(ext, 0, sizeof(*ext));
		return -1;
	}
	return ptout_extract(e->out, e->stop_base, e->stop_mask, e->stop_status, mem, fn, ctx,
			     ext);
}

void rtit_step_jsonl(const struct rtit_step *s, const struct ptout *out, struct strbuf *sb)
{
	switch (s->op) {
	case RTIT_OP_RDMSR:
		sb_printf(sb, "{\"op\":\"rdmsr\",\"msr\":\"0x%x\"}", s->msr);
		return;
	case RTIT_OP_WRMSR:
		sb_printf(sb, "{\"op\":\"wrmsr\",\"msr\":\"0x%x\",\"value\":\"0x%llx\"}", s->msr,
			  (unsigned long long)s->value);
		return;
	case RTIT_OP_TOPA:
		break;
	}
	const struct ptout_table *t = &out->tab[s->table];
	sb_printf(sb, "{\"op\":\"topa\",\"table\":\"0x%llx\",\"entries\":[",
		  (unsigned long long)t->phys);
	for (unsigned i = 0; i <= t->nout; i++) {
		uint64_t e = ptout_entry(out, s->table, i);
		bool end = e & TOPA_END;
		uint64_t size = end ? 0 : 4096ull << ((e & TOPA_SIZE_MASK) >> TOPA_SIZE_SHIFT);
		sb_printf(sb, "%s{\"base\":\"0x%llx\",\"size\":%llu,\"end\":%s,\"stop\":%s,"
			      "\"int\":%s}",
			  i ? "," : "", (unsigned long long)(e & ~0xfffull), (unsigned long long)size,
			  end ? "true" : "false", (e & TOPA_STOP) ? "true" : "false",
			  (e & TOPA_INT) ? "true" : "false");
	}
	sb_puts(sb, "]}");
}

static const char *tf(bool v) { return v ? "true" : "false"; }

void rtit_trace_json(const struct rtit_engine *e, const struct ptout_extent *ext,
		     struct strbuf *sb)
{
	const struct ptcfg_settings *s = e->set;
	const struct ptout *o = e->out;
	sb_printf(sb, "{\"rtit_ctl\":\"0x%llx\",\"output\":\"%s\",\"mode\":\"%s\",\"size\":%llu,"
		      "\"regions\":%u,\"tables\":%u,",
		  (unsigned long long)(s->ctl | RTIT_CTL_TRACEEN),
		  s->output == PTCFG_OUT_TOPA ? "topa" : "single",
		  s->mode == PTCFG_MODE_WRAP ? "wrap" : "stop", (unsigned long long)s->size, o->nreg,
		  o->ntab);
	if (s->cr3_filter)
		sb_printf(sb, "\"cr3_match\":\"0x%llx\",", (unsigned long long)s->cr3_match);
	sb_puts(sb, "\"ranges\":");
	ptcfg_ranges_json(s->ctl, s->nranges, s->addr_a, s->addr_b, sb);
	sb_printf(sb, ",\"took_over\":%s", tf(e->took_over));
	if (e->took_over)
		sb_printf(sb, ",\"previous_rtit_ctl\":\"0x%llx\"", (unsigned long long)e->saved.ctl);
	if (e->stopped_valid)
		sb_printf(sb, ",\"output_base\":\"0x%llx\",\"output_mask_ptrs\":\"0x%llx\","
			      "\"status\":\"0x%llx\",\"error\":%s,\"stopped\":%s",
			  (unsigned long long)e->stop_base, (unsigned long long)e->stop_mask,
			  (unsigned long long)e->stop_status,
			  tf(e->stop_status & RTIT_STATUS_ERROR), tf(e->stop_status & RTIT_STATUS_STOPPED));
	if (ext)
		sb_printf(sb, ",\"bytes\":%llu,\"wrapped\":%s,\"full\":%s,\"bad_pointer\":%s",
			  (unsigned long long)ext->bytes, tf(ext->wrapped), tf(ext->full),
			  tf(ext->bad_pointer));
	sb_putc(sb, '}');
}
