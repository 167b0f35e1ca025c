/* One Intel PT capture in firmware; see hw_trace.h. */
#include <efi.h>
#include <efilib.h>

#include "arch/x86_64/cpu_ops.h"
#include "arch/x86_64/pt_engine.h"
#include "arch/x86_64/pt_msr.h"
#include "core/mem.h"
#include "efi/gp_guard.h"
#include "efi/hw_trace.h"
#include "efi/trace_mem.h"

#define MAX_REGIONS 1024
#define MAX_TABLES 16

/* Large (region lists): static, one capture at a time. */
static struct {
	struct ptcfg_settings set;
	struct ptout out;
	struct ptout_region reg[MAX_REGIONS];
	struct ptout_table tab[MAX_TABLES];
	struct rtit_engine eng;
	struct strbuf *msg;
	const struct hw_hooks *hooks;
} hw;

/* ExitBootServices: an OS loader is about to hand over. Stop tracing now;
 * the OS must not inherit a running PT it knows nothing about, unless it is
 * the flight recorder, which goes on into the OS by design (the hooks). */
static void EFIAPI on_exit_boot_services(EFI_EVENT ev, void *ctx)
{
	(void)ev;
	(void)ctx;
	const struct hw_hooks *k = hw.hooks;
	if (hw.eng.running && (!k || k->stop_at_exit))
		rtit_stop(&hw.eng, hw.msg);
	if (k && k->at_exit)
		k->at_exit(k->ctx, &hw.eng);
}

EFI_STATUS hw_trace_position(uint64_t *pos)
{
	if (!hw.eng.running)
		return EFI_NOT_READY;
	char text[200];
	struct strbuf sb;
	sb_init(&sb, text, sizeof(text));
	gp_guard_install();
	int r = rtit_position(&hw.eng, pos, &sb);
	gp_guard_remove();
	return r == RTIT_OK ? EFI_SUCCESS : EFI_DEVICE_ERROR;
}

struct collect {
	struct hw_result *res;
	uint64_t cap;
};

static int collect_span(void *ctx, uint64_t phys, uint64_t len)
{
	struct collect *c = ctx;
	if (len > c->cap - c->res->len)
		len = c->cap - c->res->len;
	CopyMem(c->res->buf + c->res->len, (void *)(UINTN)phys, len);
	c->res->len += len;
	return 0;
}

struct spill_run {
	const struct hw_spill *spill;
	EFI_STATUS st;
};

static int spill_span(void *ctx, uint64_t phys, uint64_t len)
{
	struct spill_run *s = ctx;
	s->st = s->spill->write(s->spill->ctx, (const void *)(UINTN)phys, len);
	return EFI_ERROR(s->st) ? 1 : 0;
}

EFI_STATUS hw_trace(const struct ptcaps *caps, const struct ptcfg *cfg, hw_body_fn body,
		    void *ctx, const struct hw_spill *spill, const struct hw_hooks *hooks,
		    struct hw_result *res, struct strbuf *msg)
{
	efipt_memset(res, 0, sizeof(*res));
	hw.msg = msg;
	hw.hooks = hooks;
	if (ptcfg_validate(cfg, caps, &hw.set, msg))
		return EFI_UNSUPPORTED;
	const struct ptout_mem *mem = &efi_trace_mem;
	if (hooks && !(mem = hooks->place(hooks->ctx, &hw.set, msg)))
		return EFI_OUT_OF_RESOURCES;
	ptout_init(&hw.out, hw.reg, MAX_REGIONS, hw.tab, MAX_TABLES);
	if (ptout_build(&hw.out, &hw.set, mem, msg))
		return EFI_OUT_OF_RESOURCES;
	if (hooks)
		hooks->laid_out(hooks->ctx, &hw.set, &hw.out);
	rtit_engine_init(&hw.eng, &cpu_native_ops, caps, &hw.set, &hw.out, NULL);
	EFI_EVENT ebs = NULL;
	if (EFI_ERROR(uefi_call_wrapper(BS->CreateEvent, 5, EVT_SIGNAL_EXIT_BOOT_SERVICES,
					TPL_NOTIFY, on_exit_boot_services, NULL, &ebs)))
		ebs = NULL;
	uint64_t tsc_before = cpu_native_ops.rdtsc(cpu_native_ops.ctx);
	gp_guard_install();
	int started = rtit_start(&hw.eng, msg);
	gp_guard_remove();
	if (started != RTIT_OK) {
		if (ebs)
			uefi_call_wrapper(BS->CloseEvent, 1, ebs);
		ptout_free(&hw.out, mem);
		return EFI_DEVICE_ERROR;
	}
	res->tsc_start = cpu_native_ops.rdtsc(cpu_native_ops.ctx);
	if (hooks)
		hooks->started(hooks->ctx, tsc_before, res->tsc_start);
	res->body_status = body(ctx);
	gp_guard_install();
	if (hw.eng.running)
		rtit_stop(&hw.eng, msg);
	res->tsc_stop = cpu_native_ops.rdtsc(cpu_native_ops.ctx);
	if (ebs)
		uefi_call_wrapper(BS->CloseEvent, 1, ebs);
	if (hooks)
		hooks->stopped(hooks->ctx, &hw.eng, res->tsc_stop);
	/* the nominal (maximum non-turbo) ratio for timing decoders: Intel CPUs
	 * with PT have MSR_PLATFORM_INFO; read through the #GP guard all the same */
	uint64_t platform_info;
	if (cpu_native_ops.rdmsr(cpu_native_ops.ctx, MSR_PLATFORM_INFO, &platform_info) == 0) {
		res->have_nom = true;
		res->nom_freq = (unsigned)((platform_info >> 8) & 0xff);
	}
	gp_guard_remove();

	rtit_extract(&hw.eng, mem, NULL, NULL, &res->ext); /* size first */
	struct collect c = { res, res->ext.bytes };
	res->buf = c.cap ? AllocatePool(c.cap) : NULL;
	EFI_STATUS st = EFI_SUCCESS;
	if (c.cap && !res->buf && spill) {
		/* too large for a second copy: write it from where the CPU put it */
		struct spill_run sr = { spill, spill->begin(spill->ctx, c.cap) };
		if (!EFI_ERROR(sr.st))
			rtit_extract(&hw.eng, mem, spill_span, &sr, &res->ext);
		res->spilled = true;
		res->spill_status = sr.st;
		res->len = c.cap;
	} else if (c.cap && !res->buf) {
		sb_puts(msg, "no memory to copy the trace out of its buffer");
		st = EFI_OUT_OF_RESOURCES;
	} else {
		rtit_extract(&hw.eng, mem, collect_span, &c, &res->ext);
	}
	struct strbuf jb;
	sb_init(&jb, res->trace_json, sizeof(res->trace_json));
	rtit_trace_json(&hw.eng, &res->ext, &jb);
	res->have_json = !jb.truncated;
	ptout_free(&hw.out, mem); /* the recorder's memory stays: its free does nothing */
	hw.hooks = NULL;
	return st;
}
