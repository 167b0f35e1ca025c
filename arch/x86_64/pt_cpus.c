/* Intel PT on several CPUs at once; see pt_cpus.h. */
#include "arch/x86_64/pt_cpus.h"
#include "core/cpu_model.h"
#include "core/mem.h"

void ptcpus_init(struct ptcpus *c, struct ptcpu *cpu, unsigned n, const struct ptcpus_env *env)
{
	c->cpu = cpu;
	c->n = n;
	c->env = env;
	c->profile = NULL;
	c->emulated = false;
	c->msg = NULL;
	c->skip_refused = false;
	for (unsigned i = 0; i < n; i++) {
		cpu[i].state = PTCPU_IDLE;
		cpu[i].laid_out = false;
		cpu[i].shared_with = i;
		cpu[i].rc = RTIT_OK;
	}
}

void ptcpus_name(const struct ptcpus *c, unsigned i, struct strbuf *sb)
{
	sb_printf(sb, "CPU %u (APIC ID 0x%x)", c->cpu[i].number, (unsigned)c->cpu[i].apic_id);
}

/* ---- procedures that run on the CPU itself (no allocation, no output but msg) ---- */

static void identify_here(void *arg)
{
	struct ptcpus *c = arg;
	struct ptcpu *p = &c->cpu[c->cur];
	const struct cpu_ops *ops = c->env->ops(c->env->ctx, c->cur);
	cpuid_set_capture(&c->scratch, ops->cpuid, ops->ctx);
	ptcaps_parse(&p->caps, &c->scratch);
	if (p->cpuid)
		*p->cpuid = c->scratch;
	c->emulated = c->profile && ptcaps_emulate(&p->caps, c->profile);
}

static void start_here(void *arg)
{
	struct ptcpus *c = arg;
	struct ptcpu *p = &c->cpu[c->cur];
	p->rc = rtit_start(&p->eng, c->msg);
	if (p->rc == RTIT_OK)
		p->state = PTCPU_RUNNING;
}

static void stop_here(void *arg)
{
	struct ptcpus *c = arg;
	struct ptcpu *p = &c->cpu[c->cur];
	p->rc = rtit_stop(&p->eng, c->msg);
	/* rtit_stop clears TraceEn first and reads back after: stopped either way */
	p->state = PTCPU_STOPPED;
}

/* What the engine said ends its line before ours begins. */
static void end_line(struct strbuf *msg)
{
	if (msg->len && msg->buf[msg->len - 1] != '\n')
		sb_putc(msg, '\n');
}

static int run_on(struct ptcpus *c, unsigned i, void (*fn)(void *), struct strbuf *msg)
{
	c->cur = i;
	c->msg = msg;
	return c->env->on_cpu(c->env->ctx, i, fn, c);
}

/* ---- the steps ---------------------------------------------------------- */

static bool core_scoped(const struct ptcaps *caps)
{
	return cpumodel_quirks(caps->family, caps->model) & CPUMODEL_QUIRK_CORE_SCOPED;
}

/* CPU i cannot trace (its reason ends msg from mark on): the whole fails,
 * or with skip_refused it alone is left out, its reason kept. */
static int refuse(struct ptcpus *c, unsigned i, struct strbuf *msg, size_t mark)
{
	struct ptcpu *p = &c->cpu[i];
	if (!c->skip_refused)
		return -1;
	if (p->why) {
		struct strbuf wb;
		sb_init(&wb, p->why, p->why_cap);
		const char *t = msg->buf + mark;
		size_t n = msg->len - mark;
		while (n && t[n - 1] == '\n')
			n--;
		for (size_t k = 0; k < n; k++)
			sb_putc(&wb, t[k] == '\n' ? ';' : t[k]);
	}
	p->state = PTCPU_REFUSED;
	return 0;
}

int ptcpus_identify(struct ptcpus *c, const struct cpuid_set *profile, struct strbuf *msg)
{
	c->profile = profile;
	for (unsigned i = 0; i < c->n; i++) {
		struct ptcpu *p = &c->cpu[i];
		size_t mark = msg->len;
		c->emulated = false;
		if (run_on(c, i, identify_here, msg)) {
			ptcpus_name(c, i, msg);
			sb_puts(msg, ": did not run efipt's procedure to read its CPUID\n");
			if (refuse(c, i, msg, mark))
				return -1;
			continue;
		}
		if (p->state == PTCPU_ELSEWHERE)
			continue;
		if (profile && !c->emulated) {
			ptcpus_name(c, i, msg);
			sb_puts(msg, ": the CPU profile has no Intel PT\n");
			if (refuse(c, i, msg, mark))
				return -1;
			continue;
		}
		if (p->caps.absent != PTCAPS_PRESENT) {
			ptcpus_name(c, i, msg);
			sb_puts(msg, ": ");
			ptcaps_absent_line(&p->caps, msg);
			sb_putc(msg, '\n');
			if (refuse(c, i, msg, mark))
				return -1;
		}
	}
	/* Goldmont: the threads of a core share its RTIT MSRs; the first traces it */
	for (unsigned i = 0; i < c->n; i++) {
		struct ptcpu *p = &c->cpu[i];
		if (!core_scoped(&p->caps) || p->state == PTCPU_REFUSED || p->state == PTCPU_ELSEWHERE)
			continue;
		for (unsigned j = 0; j < i; j++) {
			struct ptcpu *q = &c->cpu[j];
			if (q->state != PTCPU_SHARED && q->state != PTCPU_REFUSED && core_scoped(&q->caps) &&
			    q->package == p->package && q->core == p->core) {
				p->state = PTCPU_SHARED;
				p->shared_with = j;
				ptcpus_name(c, i, msg);
				sb_puts(msg, ": not traced: its core's RTIT MSRs are per core "
					     "(Goldmont) and ");
				ptcpus_name(c, j, msg);
				sb_puts(msg, " traces that core\n");
				break;
			}
		}
	}
	return 0;
}

int ptcpus_prepare(struct ptcpus *c, const struct ptcfg *cfg, struct strbuf *msg)
{
	for (unsigned i = 0; i < c->n; i++) {
		struct ptcpu *p = &c->cpu[i];
		if (p->state != PTCPU_IDLE)
			continue;
		size_t mark = msg->len;
		/* the notes of one CPU are every CPU's unless the CPUs differ */
		char note[400];
		struct strbuf nb;
		sb_init(&nb, note, sizeof(note));
		int bad = ptcfg_validate(cfg, &p->caps, &p->set, &nb);
		if (!bad) {
			ptout_init(&p->out, p->reg, p->max_reg, p->tab, p->max_tab);
			bad = ptout_build(&p->out, &p->set, c->env->mem, &nb);
			p->laid_out = !bad;
		}
		if (bad || (nb.len && i == 0)) {
			if (bad)
				ptcpus_name(c, i, msg);
			sb_puts(msg, bad ? ": " : "");
			sb_puts(msg, note);
		}
		if (bad && !refuse(c, i, msg, mark)) {
			if (p->laid_out)
				ptout_free(&p->out, c->env->mem);
			p->laid_out = false;
			continue;
		}
		if (bad) {
			ptcpus_free(c);
			return -1;
		}
		rtit_engine_init(&p->eng, c->env->ops(c->env->ctx, i), &p->caps, &p->set, &p->out,
				 NULL);
		p->state = PTCPU_READY;
	}
	return 0;
}

int ptcpus_start(struct ptcpus *c, struct strbuf *msg)
{
	/* the APs in order, then the BSP */
	for (unsigned k = 1; k <= c->n; k++) {
		unsigned i = k % c->n;
		struct ptcpu *p = &c->cpu[i];
		if (p->state != PTCPU_READY)
			continue;
		int rc = RTIT_OK;
		if (run_on(c, i, start_here, msg))
			rc = RTIT_FAULT;
		else
			rc = p->rc;
		if (rc == RTIT_OK)
			continue;
		end_line(msg);
		ptcpus_name(c, i, msg);
		if (p->state == PTCPU_RUNNING)
			sb_puts(msg, ": started, but the procedure did not return in time\n");
		else if (rc == RTIT_FAULT && p->rc == RTIT_OK)
			sb_puts(msg, ": did not run efipt's procedure to start tracing\n");
		else
			sb_puts(msg, ": tracing did not start (above)\n");
		sb_puts(msg, "stopping every CPU already started\n");
		ptcpus_stop(c, msg);
		return rc;
	}
	return RTIT_OK;
}

int ptcpus_stop(struct ptcpus *c, struct strbuf *msg)
{
	int rc = 0;
	for (unsigned i = 0; i < c->n; i++) {
		struct ptcpu *p = &c->cpu[i];
		if (p->state != PTCPU_RUNNING)
			continue;
		if (run_on(c, i, stop_here, msg)) {
			end_line(msg);
			ptcpus_name(c, i, msg);
			sb_puts(msg, ": did not run efipt's procedure to stop tracing: its TraceEn "
				     "may still be set\n");
			rc = -1;
		}
	}
	return rc;
}

unsigned ptcpus_running(const struct ptcpus *c)
{
	unsigned n = 0;
	for (unsigned i = 0; i < c->n; i++)
		n += c->cpu[i].state == PTCPU_RUNNING;
	return n;
}

int ptcpus_extract(const struct ptcpus *c, unsigned i, ptout_span_fn fn, void *ctx,
		   struct ptout_extent *ext)
{
	const struct ptcpu *p = &c->cpu[i];
	if (p->state != PTCPU_STOPPED) {
		efipt_memset(ext, 0, sizeof(*ext));
		return -1;
	}
	return rtit_extract(&p->eng, c->env->mem, fn, ctx, ext);
}

void ptcpus_free(struct ptcpus *c)
{
	for (unsigned i = 0; i < c->n; i++) {
		struct ptcpu *p = &c->cpu[i];
		if (p->laid_out)
			ptout_free(&p->out, c->env->mem);
		p->laid_out = false;
		if (p->state == PTCPU_READY)
			p->state = PTCPU_IDLE;
	}
}
