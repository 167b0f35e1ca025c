/* Intel PT on several CPUs in firmware; see mp_trace.h. */
#include <efi.h>
#include <efilib.h>

#include "arch/x86_64/cpu_ops.h"
#include "arch/x86_64/pt_cpus.h"
#include "core/mem.h"
#include "efi/console.h"
#include "efi/fs.h"
#include "efi/gp_guard.h"
#include "efi/mp_services.h"
#include "efi/mp_trace.h"
#include "efi/trace_mem.h"

#define CPU_REGIONS 1024
#define CPU_TABLES 16

/* ---- the CPUs through MP services ------------------------------------- */

static struct ptcpus cpus;
static struct ptcpu *cpu;	/* pool: one per selected CPU */

static int on_cpu(void *ctx, unsigned i, void (*fn)(void *), void *arg)
{
	(void)ctx;
	return EFI_ERROR(mp_run(cpu[i].number, fn, arg)) ? -1 : 0;
}

/* Every CPU runs the same instructions on itself. */
static const struct cpu_ops *ops_of(void *ctx, unsigned i)
{
	(void)ctx, (void)i;
	return &cpu_native_ops;
}

static const struct ptcpus_env env = { on_cpu, ops_of, &efi_trace_mem, NULL };

/* ExitBootServices while tracing: no CPU may go on tracing into the OS. */
static struct strbuf *ebs_msg;

static void EFIAPI on_exit_boot_services(EFI_EVENT ev, void *ctx)
{
	(void)ev, (void)ctx;
	if (ptcpus_running(&cpus))
		ptcpus_stop(&cpus, ebs_msg);
}

/* Fill cpu[] for the selection: MP number, APIC ID, location; the BSP first. */
static EFI_STATUS select_cpus(const struct cpu_list *sel, unsigned *n, struct strbuf *msg)
{
	UINTN all, enabled, self;
	EFI_STATUS st = mp_count(&all, &enabled);
	if (!EFI_ERROR(st))
		st = mp_self(&self);
	if (EFI_ERROR(st)) {
		sb_printf(msg, "MP services: GetNumberOfProcessors/WhoAmI: %s", efi_status_name(st));
		return st;
	}
	unsigned want[MP_TRACE_MAX], nw = 0;
	want[nw++] = (unsigned)self;
	if (sel->all) {
		for (UINTN k = 0; k < all && nw < MP_TRACE_MAX; k++)
			if (k != self)
				want[nw++] = (unsigned)k;
		if (all > MP_TRACE_MAX)
			con_printf("efipt: --cpus all: tracing the first %u of %llu CPUs\n",
				   MP_TRACE_MAX, (unsigned long long)all);
	} else {
		bool bsp = false;
		for (unsigned k = 0; k < sel->n; k++) {
			if (sel->number[k] == self) {
				bsp = true;
				continue;
			}
			if (sel->number[k] >= all) {
				sb_printf(msg, "--cpus: there is no CPU %u: MP services counts %llu "
					       "(0-%llu)",
					  sel->number[k], (unsigned long long)all,
					  (unsigned long long)(all - 1));
				return EFI_INVALID_PARAMETER;
			}
			want[nw++] = sel->number[k];
		}
		if (!bsp) {
			sb_printf(msg, "--cpus: the list must include CPU %llu, the BSP, which runs "
				       "the traced code",
				  (unsigned long long)self);
			return EFI_INVALID_PARAMETER;
		}
	}
	*n = 0;
	for (unsigned k = 0; k < nw; k++) {
		struct mp_cpu info;
		st = mp_info(want[k], &info);
		if (EFI_ERROR(st)) {
			sb_printf(msg, "MP services: GetProcessorInfo(%u): %s", want[k],
				  efi_status_name(st));
			return st;
		}
		if (!(info.status & MP_CPU_ENABLED) || !(info.status & MP_CPU_HEALTHY)) {
			if (sel->all) {
				con_printf("efipt: CPU %u (APIC ID 0x%llx) is %s: not traced\n", want[k],
					   (unsigned long long)info.apic_id,
					   info.status & MP_CPU_ENABLED ? "unhealthy" : "disabled");
				continue;
			}
			sb_printf(msg, "--cpus: CPU %u (APIC ID 0x%llx) is %s", want[k],
				  (unsigned long long)info.apic_id,
				  info.status & MP_CPU_ENABLED ? "unhealthy" : "disabled");
			return EFI_INVALID_PARAMETER;
		}
		struct ptcpu *p = &cpu[*n];
		efipt_memset(p, 0, sizeof(*p));
		p->number = want[k];
		p->apic_id = (uint32_t)info.apic_id;
		p->package = info.package;
		p->core = info.core;
		p->reg = AllocatePool(CPU_REGIONS * sizeof(*p->reg));
		p->tab = AllocatePool(CPU_TABLES * sizeof(*p->tab));
		p->max_reg = CPU_REGIONS;
		p->max_tab = CPU_TABLES;
		++*n;
		if (!p->reg || !p->tab) {
			sb_puts(msg, "no pool memory for the CPUs' buffer layouts");
			return EFI_OUT_OF_RESOURCES;
		}
	}
	return EFI_SUCCESS;
}

static void free_cpus(unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (cpu[i].reg)
			FreePool(cpu[i].reg);
		if (cpu[i].tab)
			FreePool(cpu[i].tab);
	}
	FreePool(cpu);
	cpu = NULL;
}

/* ---- the traces out of their buffers ----------------------------------- */

struct out_span {
	struct esp_file *w;	/* the trace file, or NULL */
	EFI_STATUS st;
	uint8_t *copy;		/* the decode's copy, or NULL */
	uint64_t len, cap;
};

static int out_span(void *ctx, uint64_t phys, uint64_t len)
{
	struct out_span *o = ctx;
	const void *p = (const void *)(UINTN)phys;
	if (o->w && !EFI_ERROR(o->st))
		o->st = esp_file_append(o->w, p, (UINTN)len);
	if (o->copy) {
		uint64_t n = len < o->cap - o->len ? len : o->cap - o->len;
		CopyMem(o->copy + o->len, p, n);
		o->len += n;
	}
	return 0;
}

static void trace_file_name(unsigned number, char *name, UINTN cap)
{
	struct strbuf nb;
	sb_init(&nb, name, cap);
	if (number)
		sb_printf(&nb, "trace.cpu%u.pt", number);
	else
		sb_puts(&nb, "trace.pt");
}

/* CPU i's trace into its file and (keep) a copy; its manifest entry. */
static void take_trace(struct run *run, unsigned i, bool keep, struct mp_trace_cpu *r,
		       struct strbuf *traces)
{
	struct ptout_extent ext;
	ptcpus_extract(&cpus, i, NULL, NULL, &ext); /* its size */
	struct esp_file w;
	char name[32];
	trace_file_name(r->number, name, sizeof(name));
	struct out_span o = { NULL, EFI_SUCCESS, NULL, 0, ext.bytes };
	if (run) {
		o.st = run_file_begin(run, name, ext.bytes, &w);
		if (!EFI_ERROR(o.st))
			o.w = &w;
	}
	if (keep)
		o.copy = AllocatePool(ext.bytes ? ext.bytes : 1);
	if (keep && !o.copy)
		con_printf("efipt: CPU %u: no pool memory for a copy of its %llu-byte trace: not "
			   "decoded in place\n",
			   r->number, (unsigned long long)ext.bytes);
	ptcpus_extract(&cpus, i, out_span, &o, &r->ext);
	if (o.w)
		o.st = run_file_end(run, name, &w, o.st);
	r->write_status = o.st;
	r->buf = o.copy;
	r->len = r->ext.bytes;
	if (!traces)
		return;
	sb_printf(traces, "%s{\"cpu\": %u, \"file\": \"%s\", \"bytes\": %llu, \"apic_id\": "
			  "\"0x%llx\", \"rtit\": ",
		  traces->len > 1 ? ", " : "", r->number, name, (unsigned long long)r->ext.bytes,
		  (unsigned long long)r->apic_id);
	rtit_trace_json(&cpus.cpu[i].eng, &r->ext, traces);
	sb_putc(traces, '}');
}

/* The manifest's "trace": CPU 0's members, "cpus" and "traces". */
static void trace_manifest(struct run *run, unsigned n0, const struct ptout_extent *ext0,
			   const char *traces, unsigned ntraced, const char *shared)
{
	UINTN cap = 4096 + efipt_strlen(traces) + efipt_strlen(shared);
	char *j = AllocatePool(cap);
	if (!j)
		return;
	struct strbuf jb;
	sb_init(&jb, j, cap);
	rtit_trace_json(&cpus.cpu[n0].eng, ext0, &jb);
	if (jb.len && j[jb.len - 1] == '}')
		jb.len--;
	sb_printf(&jb, ", \"cpus\": %u, \"traces\": %s]%s}", ntraced, traces, shared);
	if (!jb.truncated)
		run_member(run, "trace", "%s", j);
	FreePool(j);
}

EFI_STATUS mp_trace(struct run *run, const struct cpu_list *sel,
		    const struct cpuid_set *profile, const struct ptcfg *cfg, bool keep,
		    hw_body_fn body, void *ctx, struct mp_trace_result *res, struct strbuf *msg)
{
	efipt_memset(res, 0, sizeof(*res));
	EFI_STATUS st = mp_open(msg);
	if (EFI_ERROR(st))
		return EFI_NOT_FOUND;
	cpu = AllocateZeroPool(MP_TRACE_MAX * sizeof(*cpu));
	if (!cpu) {
		sb_puts(msg, "no pool memory for the CPUs' state");
		return EFI_OUT_OF_RESOURCES;
	}
	unsigned n = 0;
	st = select_cpus(sel, &n, msg);
	if (EFI_ERROR(st)) {
		free_cpus(n);
		return st;
	}
	ptcpus_init(&cpus, cpu, n, &env);
	if (ptcpus_identify(&cpus, profile, msg)) {
		free_cpus(n);
		return EFI_UNSUPPORTED;
	}
	if (ptcpus_prepare(&cpus, cfg, msg)) {
		free_cpus(n);
		return EFI_UNSUPPORTED;
	}
	unsigned ntraced = 0;
	for (unsigned i = 0; i < n; i++)
		ntraced += cpu[i].state == PTCPU_READY;
	con_printf("efipt: tracing %u CPUs:", ntraced);
	for (unsigned i = 0; i < n; i++)
		if (cpu[i].state == PTCPU_READY)
			con_printf(" %u (APIC ID 0x%x)", cpu[i].number, (unsigned)cpu[i].apic_id);
	con_puts("\n");
	EFI_EVENT ebs = NULL;
	ebs_msg = msg;
	if (EFI_ERROR(uefi_call_wrapper(BS->CreateEvent, 5, EVT_SIGNAL_EXIT_BOOT_SERVICES,
					TPL_NOTIFY, on_exit_boot_services, NULL, &ebs)))
		ebs = NULL;
	gp_guard_install();
	int started = ptcpus_start(&cpus, msg);
	gp_guard_remove();
	if (started != RTIT_OK) {
		if (ebs)
			uefi_call_wrapper(BS->CloseEvent, 1, ebs);
		ptcpus_free(&cpus);
		free_cpus(n);
		return EFI_DEVICE_ERROR;
	}
	res->tsc_start = cpu_native_ops.rdtsc(cpu_native_ops.ctx);
	res->body_status = body(ctx);
	gp_guard_install();
	int stopped = ptcpus_stop(&cpus, msg);
	gp_guard_remove();
	res->tsc_stop = cpu_native_ops.rdtsc(cpu_native_ops.ctx);
	if (ebs)
		uefi_call_wrapper(BS->CloseEvent, 1, ebs);
	if (stopped)
		con_printf("efipt: %s\n", msg->buf);

	/* every traced CPU's trace, straight from its buffer */
	UINTN tcap = 1024 + (UINTN)n * 4096;
	char *traces = AllocatePool(tcap);
	char *shared = AllocatePool(256 + (UINTN)n * 64);
	struct strbuf tb, sh;
	if (traces) {
		sb_init(&tb, traces, tcap);
		sb_putc(&tb, '[');
	}
	if (shared) {
		sb_init(&sh, shared, 256 + (UINTN)n * 64);
		sb_puts(&sh, "");
	}
	unsigned first = n;
	struct ptout_extent ext0 = { 0 };
	for (unsigned i = 0; i < n; i++) {
		struct mp_trace_cpu *r = &res->cpu[res->n++];
		r->number = cpu[i].number;
		r->apic_id = cpu[i].apic_id;
		r->traced = cpu[i].state == PTCPU_STOPPED;
		if (!r->traced) {
			if (shared)
				sb_printf(&sh, "%s{\"cpu\": %u, \"apic_id\": \"0x%x\", \"traced_by\": %u}",
					  sh.len ? ", " : "", cpu[i].number, (unsigned)cpu[i].apic_id,
					  cpu[cpu[i].shared_with].number);
			continue;
		}
		take_trace(run, i, keep, r, traces ? &tb : NULL);
		if (first == n) {
			first = i;
			ext0 = r->ext;
		}
		con_printf("efipt: CPU %u (APIC ID 0x%llx): %llu trace bytes%s%s%s\n", r->number,
			   (unsigned long long)r->apic_id, (unsigned long long)r->len,
			   r->ext.wrapped ? ", wrapped (older trace overwritten)" : "",
			   r->ext.full ? ", buffer full (trace stopped early)" : "",
			   r->ext.error ? ", IA32_RTIT_STATUS.Error set" : "");
	}
	if (traces && tb.truncated) {
		con_puts("efipt: the CPUs' manifest entries did not fit: the manifest lists no traces\n");
		FreePool(traces);
		traces = NULL;
	}
	if (run && traces && shared && first < n) {
		char tail[64 + 256 + MP_TRACE_MAX * 64];
		struct strbuf xb;
		sb_init(&xb, tail, sizeof(tail));
		if (sh.len)
			sb_printf(&xb, ", \"shared_core\": [%s]", shared);
		trace_manifest(run, first, &ext0, traces, ntraced, tail);
	}
	if (traces)
		FreePool(traces);
	if (shared)
		FreePool(shared);
	ptcpus_free(&cpus);
	free_cpus(n);
	return stopped ? EFI_DEVICE_ERROR : EFI_SUCCESS;
}
