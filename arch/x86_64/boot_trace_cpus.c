/* The firmware boot trace on the application processors; see boot_trace_cpus.h. */
#include "arch/x86_64/boot_trace_cpus.h"
#include "core/mem.h"

/* pt_cpus' index -> MP services' number */
static int on_index(void *ctx, unsigned i, void (*fn)(void *), void *arg)
{
	struct boottrace_aps *a = ctx;
	return a->mp->on_cpu(a->mp->ctx, a->cpu[i].number, fn, arg);
}

static const struct cpu_ops *ops_index(void *ctx, unsigned i)
{
	struct boottrace_aps *a = ctx;
	return a->mp->ops(a->mp->ctx, a->cpu[i].number);
}

/* One more part of rec->reason, joined by "; ". */
static void note(struct fwtrace_rec *r, const char *text)
{
	struct strbuf sb;
	size_t n = efipt_strlen(r->reason);
	sb_init(&sb, r->reason + n, sizeof(r->reason) - n);
	if (n)
		sb_puts(&sb, "; ");
	sb_puts(&sb, text);
}

/* Add CPU number to the selection: cpu[] for pt_cpus, or noted as unusable. */
static void select_cpu(struct boottrace_aps *a, struct fwtrace_rec *rec, unsigned number)
{
	uint32_t apic = 0, package = 0, core = 0;
	int usable = 0;
	char text[160];
	struct strbuf tb;
	sb_init(&tb, text, sizeof(text));
	if (a->mp->info(a->mp->ctx, number, &apic, &package, &core, &usable)) {
		sb_printf(&tb, "--cpus: MP services has no information on CPU %u: not traced", number);
		note(rec, text);
		return;
	}
	if (!usable) {
		struct fwtrace_rec *r = &a->rec[a->nrec++];
		fwtrace_init_cpu(r, rec, number, apic);
		r->status = FWTRACE_REFUSED;
		sb_printf(&tb, "CPU %u (APIC ID 0x%x) is disabled or unhealthy (MP services): not "
			       "traced", number, apic);
		fwtrace_put_str(r->reason, sizeof(r->reason), text);
		return;
	}
	unsigned i = a->n++;
	struct ptcpu *p = &a->cpu[i];
	efipt_memset(p, 0, sizeof(*p));
	p->number = number;
	p->apic_id = apic;
	p->package = package;
	p->core = core;
	p->reg = a->reg[i];
	p->max_reg = FWTRACE_MAX_REGIONS;
	p->tab = a->tab[i];
	p->max_tab = FWTRACE_MAX_TABLES;
	p->cpuid = &a->cpuid[i];
	p->why = a->why[i];
	p->why_cap = BOOTTRACE_WHY;
	a->why[i][0] = 0;
}

/* The selection of --cpus: the boot processor first (traced from PEI). */
static void select_all(struct boottrace_aps *a, struct fwtrace_rec *rec)
{
	const struct boottrace_mp *mp = a->mp;
	const struct cpu_list *l = &a->opts.cpus;
	char text[200];
	struct strbuf tb;
	select_cpu(a, rec, mp->self);
	if (l->all) {
		for (unsigned k = 0; k < mp->count && a->nrec + a->n <= FWTRACE_MAX_CPUS; k++)
			if (k != mp->self)
				select_cpu(a, rec, k);
		if (mp->count > FWTRACE_MAX_CPUS + 1) {
			sb_init(&tb, text, sizeof(text));
			sb_printf(&tb, "--cpus all: the first %u of %u CPUs", FWTRACE_MAX_CPUS + 1,
				  mp->count);
			note(rec, text);
		}
		return;
	}
	for (unsigned k = 0; k < l->n; k++) {
		unsigned number = l->number[k];
		if (number == mp->self)
			continue;
		if (number >= mp->count) {
			sb_init(&tb, text, sizeof(text));
			sb_printf(&tb, "--cpus: there is no CPU %u (MP services counts %u: 0-%u): not "
				       "traced", number, mp->count, mp->count - 1);
			note(rec, text);
			continue;
		}
		select_cpu(a, rec, number);
	}
}

/* cpu[i]'s record once pt_cpus is through with it. */
static void put_cpu(struct boottrace_aps *a, const struct fwtrace_rec *rec, unsigned i,
		    uint64_t tsc)
{
	struct ptcpu *p = &a->cpu[i];
	struct fwtrace_rec *r = &a->rec[a->nrec++];
	fwtrace_init_cpu(r, rec, p->number, p->apic_id);
	if (p->cpuid)
		fwtrace_put_cpuid(r, p->cpuid);
	char text[BOOTTRACE_WHY + 80];
	struct strbuf tb;
	sb_init(&tb, text, sizeof(text));
	switch (p->state) {
	case PTCPU_RUNNING:
		fwtrace_put_settings(r, &p->set);
		boottrace_put_layout(r, &p->out);
		r->tsc_start = tsc;
		r->status = FWTRACE_RUNNING;
		return;
	case PTCPU_SHARED:
		r->status = FWTRACE_REFUSED;
		sb_printf(&tb, "not traced: its core's RTIT MSRs are per core (Goldmont) and CPU %u "
			       "traces that core", a->cpu[p->shared_with].number);
		break;
	case PTCPU_REFUSED:
		r->status = p->caps.absent != PTCAPS_PRESENT ? FWTRACE_UNSUPPORTED : FWTRACE_REFUSED;
		sb_puts(&tb, p->why);
		break;
	default:
		r->status = FWTRACE_FAILED;
		sb_puts(&tb, "tracing did not start on every CPU: ");
		sb_puts(&tb, a->msg);
		break;
	}
	fwtrace_put_str(r->reason, sizeof(r->reason), text);
}

unsigned boottrace_aps_start(struct boottrace_aps *a, struct fwtrace_rec *rec,
			     const struct boottrace_mp *mp, const struct ptout_mem *mem)
{
	a->mp = mp;
	a->n = a->nrec = 0;
	a->msg[0] = 0;
	uint32_t apic = 0, package, core;
	int usable;
	rec->cpu_number = mp->self;
	if (!mp->info(mp->ctx, mp->self, &apic, &package, &core, &usable))
		rec->apic_id = apic;
	char err[200];
	struct strbuf eb;
	sb_init(&eb, err, sizeof(err));
	if (fwtrace_parse_options(&a->opts, rec->options, &eb) || !a->opts.cpus_given)
		return 0;
	if (rec->status != FWTRACE_RUNNING || rec->source != FWTRACE_SRC_HW) {
		sb_printf(&eb, "--cpus: the boot processor is not traced (%s): no other CPU is",
			  fwtrace_status_name(rec->status));
		note(rec, err);
		return 0;
	}
	select_all(a, rec);
	if (a->n < 2)
		return 0;
	a->env = (struct ptcpus_env){ on_index, ops_index, mem, a };
	ptcpus_init(&a->c, a->cpu, a->n, &a->env);
	a->c.skip_refused = true;
	a->cpu[0].state = PTCPU_ELSEWHERE;
	struct strbuf msg;
	sb_init(&msg, a->msg, sizeof(a->msg));
	const struct cpuid_set *profile = NULL;
	if (rec->flags & FWTRACE_F_EMULATED) {
		/* EfiptPei emulated under QEMU TCG alone; its profile is the record's CPUID */
		fwtrace_get_cpuid(rec, &a->profile);
		profile = &a->profile;
	}
	if (ptcpus_identify(&a->c, profile, &msg) == 0) {
		if (profile)
			for (unsigned i = 0; i < a->n; i++)
				a->cpuid[i] = *profile;
		if (ptcpus_prepare(&a->c, &a->opts.cfg, &msg) == 0)
			ptcpus_start(&a->c, &msg);
	}
	const struct cpu_ops *here = mp->ops(mp->ctx, mp->self);
	uint64_t tsc = here->rdtsc(here->ctx);
	unsigned running = 0;
	for (unsigned i = 1; i < a->n; i++) {
		put_cpu(a, rec, i, tsc);
		running += a->cpu[i].state == PTCPU_RUNNING;
	}
	return running;
}

unsigned boottrace_aps_stop(struct boottrace_aps *a, uint32_t where, const struct cpu_ops *ops)
{
	if (a->n < 2 || !ptcpus_running(&a->c))
		return 0;
	struct strbuf msg;
	sb_init(&msg, a->msg, sizeof(a->msg));
	ptcpus_stop(&a->c, &msg);
	uint64_t tsc = ops->rdtsc(ops->ctx);
	unsigned failed = 0;
	for (unsigned i = 1, k = 0; i < a->n; i++) {
		struct ptcpu *p = &a->cpu[i];
		/* its record: the same order as put_cpu made them, after the unusable ones */
		while (k < a->nrec && a->rec[k].cpu_number != p->number)
			k++;
		if (k == a->nrec)
			break;
		struct fwtrace_rec *r = &a->rec[k];
		if (r->status != FWTRACE_RUNNING)
			continue;
		r->stopped_at = where;
		r->tsc_stop = tsc;
		if (p->state != PTCPU_STOPPED || !p->eng.stopped_valid) {
			r->status = FWTRACE_FAILED;
			fwtrace_put_str(r->reason, sizeof(r->reason),
					"the procedure that stops its trace did not run: its TraceEn "
					"may still be set");
			failed++;
			continue;
		}
		r->status = FWTRACE_STOPPED;
		r->stop_base = p->eng.stop_base;
		r->stop_mask = p->eng.stop_mask;
		r->stop_status = p->eng.stop_status;
		if (p->rc != RTIT_OK)
			fwtrace_put_str(r->reason, sizeof(r->reason), a->msg);
	}
	return failed;
}

void boottrace_aps_put(const struct boottrace_aps *a, struct fwtrace_rec *table)
{
	struct fwtrace_rec *c = fwtrace_cpus(table);
	for (unsigned k = 0; k < a->nrec; k++)
		c[k] = a->rec[k];
	table->ncpus = a->nrec;
}
