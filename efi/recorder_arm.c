/* The flight recorder region: arming, ExitBootServices, stop; see recorder.h. */
#include <efi.h>
#include <efilib.h>

#include "arch/x86_64/cpu_ops.h"
#include "arch/x86_64/pt_msr.h"
#include "arch/x86_64/trace_marker.h"
#include "core/mem.h"
#include "core/pt_rtit.h"
#include "core/recorder_write.h"
#include "efi/console.h"
#include "efi/gp_guard.h"
#include "efi/recorder.h"
#include "efi/sideband.h"
#include "efi/trace_mem.h"

/* aa730c61-b6f5-41ef-870d-4e00374d9897, cac64b07-3b6b-4974-b503-7c1f81430f3c */
EFI_GUID recorder_vendor_guid = { 0xaa730c61, 0xb6f5, 0x41ef,
				  { 0x87, 0x0d, 0x4e, 0x00, 0x37, 0x4d, 0x98, 0x97 } };
EFI_GUID recorder_table_guid = { 0xcac64b07, 0x3b6b, 0x4974,
				 { 0xb5, 0x03, 0x7c, 0x1f, 0x81, 0x43, 0x0f, 0x3c } };

#define PAGE 4096ull
#define EXIT_IMAGES 256u	/* image records room at ExitBootServices */
#define SYNTH_REGIONS 64u
#define SYNTH_TABLES 4u

static struct {
	bool armed;
	uint8_t *mem;		/* the region (identity mapped: mem == phys) */
	uint64_t phys, size;
	struct ptrec_plan plan;
	struct ptrec_header *h;
	struct ptout_carve carve;
	EFI_EVENT ebs;		/* non-hw sources: the recorder's own */
	EFI_HANDLE *handles;	/* for ExitBootServices: no allocation there */
	UINTN handles_bytes;
	bool var_written, table_installed;
	/* the synthetic ring */
	struct ptout out;
	struct ptout_region reg[SYNTH_REGIONS];
	struct ptout_table tab[SYNTH_TABLES];
	uint64_t synth_pos;
	struct hw_hooks hooks;
} rec;

static void seal(void)
{
	ptrec_header_seal(rec.h);
}

static uint8_t *sec(uint32_t kind)
{
	return rec.mem + rec.plan.off[kind];
}

EFI_STATUS recorder_set_var(const struct ptrec_var *v)
{
	return uefi_call_wrapper(RT->SetVariable, 5, L"" PTREC_VAR_NAME, &recorder_vendor_guid,
				 EFI_VARIABLE_NON_VOLATILE | EFI_VARIABLE_BOOTSERVICE_ACCESS |
					 EFI_VARIABLE_RUNTIME_ACCESS,
				 sizeof(*v), (void *)v);
}

/* The generation after the variable's (1 without one). */
static uint64_t next_generation(void)
{
	struct ptrec_var v;
	UINTN n = sizeof(v);
	UINT32 attr;
	EFI_STATUS st = uefi_call_wrapper(RT->GetVariable, 5, L"" PTREC_VAR_NAME,
					  &recorder_vendor_guid, &attr, &n, &v);
	char why[200];
	struct strbuf sb;
	sb_init(&sb, why, sizeof(why));
	if (EFI_ERROR(st) || ptrec_var_decode(&v, n, &v, &sb))
		return 1;
	return v.generation + 1;
}

/* The boot's number: the high half of the monotonic count, which the
 * platform advances once per boot (UEFI 2.10 7.5.3). 0 if there is none. */
uint32_t recorder_boot_number(void)
{
	UINT64 c = 0;
	if (EFI_ERROR(uefi_call_wrapper(BS->GetNextMonotonicCount, 1, &c)))
		return 0;
	return (uint32_t)(c >> 32);
}

static void copy_str(char *dst, unsigned cap, const char *src)
{
	struct strbuf sb;
	sb_init(&sb, dst, cap);
	sb_puts(&sb, src);
}

/* The CPUID leaves a decoder needs (33.3.1: 0, 1, 7, 14H; time: 15H, 16H;
 * hypervisor; MAXPHYADDR), from the set the run captured. */
static void store_cpuid(const struct cpuid_set *set)
{
	static const uint32_t want[] = { 0, 1, 7, 0x14, 0x15, 0x16, 0x40000000, 0x80000000,
					 0x80000008 };
	rec.h->ncpuid = 0;
	for (unsigned i = 0; i < set->n && rec.h->ncpuid < PTREC_MAX_CPUID; i++) {
		const struct cpuid_leaf *l = &set->e[i];
		for (unsigned k = 0; k < sizeof(want) / sizeof(want[0]); k++)
			if (l->leaf == want[k]) {
				struct ptrec_cpuid *c = &rec.h->cpuid[rec.h->ncpuid++];
				c->leaf = l->leaf;
				c->subleaf = l->subleaf;
				efipt_memcpy(c->r, l->r, sizeof(c->r));
			}
	}
}

/* An image's code as one page-rounded range, or false (no usable range). */
static bool image_range(const EFI_LOADED_IMAGE *li, uint64_t *lo, uint64_t *hi)
{
	uint64_t base = (UINTN)li->ImageBase, size = li->ImageSize;
	if (!base || !size || size > (1ull << 30) || !ptimg_range_ok(base, size))
		return false;
	*lo = base & ~(PAGE - 1);
	*hi = (base + size + PAGE - 1) & ~(PAGE - 1);
	return true;
}

/* The handles with a loaded image into rec.handles (no allocation). */
static UINTN image_handles(void)
{
	EFI_GUID lip = LOADED_IMAGE_PROTOCOL;
	UINTN bytes = rec.handles_bytes;
	if (EFI_ERROR(uefi_call_wrapper(BS->LocateHandle, 5, ByProtocol, &lip, NULL, &bytes,
					rec.handles)))
		return 0;
	return bytes / sizeof(EFI_HANDLE);
}

/* Count the images and their code (for the plan), and size rec.handles. */
static EFI_STATUS survey(uint32_t *n, uint64_t *code)
{
	EFI_GUID lip = LOADED_IMAGE_PROTOCOL;
	UINTN nh = 0;
	EFI_HANDLE *h = NULL;
	EFI_STATUS st = uefi_call_wrapper(BS->LocateHandleBuffer, 5, ByProtocol, &lip, NULL, &nh,
					  &h);
	if (EFI_ERROR(st))
		return st;
	*n = 0;
	*code = 0;
	for (UINTN i = 0; i < nh; i++) {
		EFI_LOADED_IMAGE *li = sideband_loaded_image(h[i]);
		uint64_t lo, hi;
		(*n)++;
		if (li && image_range(li, &lo, &hi))
			*code += hi - lo;
	}
	FreePool(h);
	/* room for the images an OS loader adds before ExitBootServices */
	rec.handles_bytes = (nh + EXIT_IMAGES) * sizeof(EFI_HANDLE);
	rec.handles = AllocatePool(rec.handles_bytes);
	return rec.handles ? EFI_SUCCESS : EFI_OUT_OF_RESOURCES;
}

/* Is [lo, hi) snapshotted at arming with the same bytes? */
static bool unchanged_since_arming(uint64_t lo, uint64_t hi)
{
	const uint8_t *s = sec(PTREC_SEC_CODE_ARM);
	uint32_t n;
	efipt_memcpy(&n, s, 4);
	for (uint32_t i = 0; i < n && i < rec.plan.arm_images; i++) {
		struct ptrec_snap a;
		efipt_memcpy(&a, s + 8 + sizeof(a) * i, sizeof(a));
		if (a.phys == lo && a.size == hi - lo)
			return CompareMem(s + a.off, (const void *)(UINTN)lo, hi - lo) == 0;
	}
	return false;
}

/* What take() did. */
struct took {
	uint32_t images, same, dropped;
	uint64_t bytes;
};

/*
 * The loaded images and their code into the images and code sections of
 * kind: at arming all of them; at ExitBootServices (at_exit: no allocation,
 * UEFI 2.10 7.4) only those that are new or whose code changed since.
 */
static void take(uint32_t images, uint32_t code, uint32_t max, bool at_exit, struct took *t)
{
	struct ptrec_images_writer iw;
	struct ptrec_code_writer cw;
	ptrec_images_begin(&iw, sec(images), rec.plan.cap[images]);
	ptrec_code_begin(&cw, sec(code), rec.plan.cap[code], max);
	UINTN n = image_handles();
	static struct imgrec r;
	efipt_memset(t, 0, sizeof(*t));
	for (UINTN i = 0; i < n; i++) {
		EFI_LOADED_IMAGE *li = sideband_loaded_image(rec.handles[i]);
		uint64_t lo = 0, hi = 0;
		if (!li)
			continue;
		bool range = image_range(li, &lo, &hi);
		if (at_exit && (!range || unchanged_since_arming(lo, hi))) {
			t->same += range;
			continue;
		}
		sideband_image_record(li, &r, !at_exit);
		if (ptrec_images_add(&iw, &r))
			continue;
		if (range)
			ptrec_code_add(&cw, lo, hi - lo, li->ImageCodeType, iw.n - 1,
				       (const void *)(UINTN)lo);
	}
	ptrec_section_done(rec.h, images, rec.mem, ptrec_images_used(&iw));
	ptrec_section_done(rec.h, code, rec.mem, ptrec_code_used(&cw));
	t->images = cw.n;
	t->dropped = cw.dropped + iw.dropped;
	t->bytes = cw.n ? cw.next - ptrec_code_dir_bytes(cw.max) : 0;
	if (t->dropped) {
		struct strbuf sb;
		sb_init(&sb, rec.h->exit_note, sizeof(rec.h->exit_note));
		sb_printf(&sb, "%u images (%llu KiB of code) did not fit in %s", t->dropped,
			  (unsigned long long)(cw.dropped_bytes >> 10),
			  at_exit ? "--recorder-room" : "the region");
		rec.h->flags |= PTREC_F_EXIT_CUT;
	}
}

/* Tracing stopped (33.3.3): where it ended, as read back. */
static void record_stop(const struct rtit_engine *eng, uint64_t tsc)
{
	if (!eng->stopped_valid)
		return;
	struct ptrec_header *h = rec.h;
	h->flags |= PTREC_F_STOPPED;
	h->tsc_stop = tsc;
	h->stop_base = eng->stop_base;
	h->stop_mask = eng->stop_mask;
	h->stop_status = eng->stop_status;
}

/*
 * ExitBootServices is being signalled (UEFI 2.10 7.4: no memory may be
 * allocated here): take the images that are new or whose code changed
 * since arming (the OS loader's work: a kernel's EFI stub, what it
 * relocated), and record the exit and, if tracing stopped, where.
 */
static void at_exit(const struct rtit_engine *eng)
{
	if (!rec.armed)
		return;
	struct ptrec_header *h = rec.h;
	h->tsc_exit = cpu_native_ops.rdtsc(cpu_native_ops.ctx);
	h->flags |= PTREC_F_EXIT;
	if (eng && !eng->running)
		record_stop(eng, h->tsc_exit);
	struct took t;
	take(PTREC_SEC_IMAGES_EXIT, PTREC_SEC_CODE_EXIT, rec.plan.exit_images, true, &t);
	seal();
	char line[200];
	struct strbuf lb;
	sb_init(&lb, line, sizeof(line));
	bool stop = (h->flags & PTREC_F_STOPPED) || (h->flags & PTREC_F_STOP_AT_EXIT);
	sb_printf(&lb, "efipt: ExitBootServices: recorder: %u images taken again (%llu KiB), %u "
		       "unchanged; %s\n",
		  t.images, (unsigned long long)(t.bytes >> 10), t.same,
		  h->source == PTREC_SRC_SYNTHETIC ? "SYNTHETIC trace: nothing traces on"
		  : stop			  ? "tracing stops here"
						  : "tracing goes on into the OS");
	con_debugcon_puts(line);
}

static void EFIAPI on_exit_boot_services(EFI_EVENT ev, void *ctx)
{
	(void)ev;
	(void)ctx;
	/* --source qemu: the stop marker ends efipt-qemu.so's trace here */
	if (rec.h->source == PTREC_SRC_QEMU && (rec.h->flags & PTREC_F_STOP_AT_EXIT))
		trace_marker_stop();
	at_exit(NULL);
}

/* Where the region goes and why: recorder_place() (recorder_place.c). */
EFI_STATUS recorder_arm(struct app *app, const struct recorder_opts *o, uint32_t source,
			uint64_t trace_area, uint64_t align, const struct traced_image *img,
			struct strbuf *msg)
{
	efipt_memset(&rec, 0, sizeof(rec));
	uint32_t nimg;
	uint64_t code;
	EFI_STATUS st = survey(&nimg, &code);
	if (EFI_ERROR(st)) {
		sb_printf(msg, "cannot list the loaded images: %s", efi_status_name(st));
		return st;
	}
	struct ptrec_plan *p = &rec.plan;
	p->trace_area = trace_area;
	p->ntab = PTREC_MAX_TABLES;
	p->nreg = PTREC_MAX_REGIONS;
	p->cmdline_len = efipt_strlen(app->cmdline);
	p->arm_images = nimg + 8;
	p->arm_code = code;
	p->exit_images = EXIT_IMAGES;
	p->exit_code = (o->room + PAGE - 1) & ~(PAGE - 1);
	ptrec_plan(p);
	char where[256];
	struct strbuf wb;
	sb_init(&wb, where, sizeof(where));
	st = recorder_place(p->total, align < PAGE ? PAGE : align, o->at, &rec.phys, &wb);
	if (EFI_ERROR(st)) {
		sb_printf(msg, "no place for the recorder region (%llu KiB): %s",
			  (unsigned long long)(p->total >> 10), where);
		FreePool(rec.handles);
		rec.handles = NULL;
		return st;
	}
	rec.size = p->total;
	rec.mem = (uint8_t *)(UINTN)rec.phys;
	rec.h = (struct ptrec_header *)(rec.mem + p->header_off);
	/* the header and the sections' own bytes start out zero (the code
	 * sections' directories; their snapshots are copied in whole); the
	 * trace area is zeroed by ptout_build (wrap mode) */
	SetMem(rec.mem + p->header_off, PTREC_HEADER_BYTES, 0);
	for (uint32_t k = PTREC_SEC_LAYOUT; k <= PTREC_SEC_CMDLINE; k++) {
		bool snaps = k == PTREC_SEC_CODE_ARM || k == PTREC_SEC_CODE_EXIT;
		uint32_t n = k == PTREC_SEC_CODE_ARM ? p->arm_images : p->exit_images;
		SetMem(sec(k), snaps ? ptrec_code_dir_bytes(n) : p->cap[k], 0);
	}
	struct ptrec_header *h = rec.h;
	h->generation = next_generation();
	h->region_phys = rec.phys;
	h->region_size = rec.size;
	h->header_off = p->header_off;
	h->boot = recorder_boot_number();
	h->source = source;
	h->output = PTREC_OUT_TOPA;
	h->mode = PTREC_MODE_WRAP;
	if (o->stop_at_exit)
		h->flags |= PTREC_F_STOP_AT_EXIT;
	store_cpuid(&app->cpuid);
	if (app->have_run) {
		copy_str(h->run_id, sizeof(h->run_id), app->run.id);
		copy_str(h->armed_at, sizeof(h->armed_at), app->run.started);
	}
	char fw[64];
	ucs2_to_ascii(fw, sizeof(fw), ST->FirmwareVendor ? ST->FirmwareVendor : L"");
	copy_str(h->fw_vendor, sizeof(h->fw_vendor), fw);
	h->fw_revision = ST->FirmwareRevision;
	h->uefi_revision = ST->Hdr.Revision;
	if (img && img->path[0]) {
		copy_str(h->traced_path, sizeof(h->traced_path), img->path);
		h->traced_base = img->base;
		h->traced_size = img->size;
	}
	copy_str(h->placement, sizeof(h->placement), where);
	ptrec_plan_sections(p, h);
	efipt_memcpy(sec(PTREC_SEC_CMDLINE), app->cmdline, p->cmdline_len);
	ptrec_section_done(h, PTREC_SEC_CMDLINE, rec.mem, p->cmdline_len);
	struct took t;
	take(PTREC_SEC_IMAGES_ARM, PTREC_SEC_CODE_ARM, p->arm_images, false, &t);
	ptout_carve_init(&rec.carve, &efi_trace_mem, rec.phys, trace_area);
	seal();
	rec.armed = true;

	struct ptrec_var v = { .state = PTREC_VAR_ARMED, .region_phys = rec.phys,
			       .region_size = rec.size, .header_off = p->header_off,
			       .generation = h->generation, .boot = h->boot };
	ptrec_var_seal(&v);
	st = recorder_set_var(&v);
	if (EFI_ERROR(st)) {
		sb_printf(msg, "cannot set the UEFI variable %s: %s (a recorder must be found after "
			       "a reset)",
			  PTREC_VAR_NAME, efi_status_name(st));
		recorder_disarm();
		return st;
	}
	rec.var_written = true;
	st = uefi_call_wrapper(BS->InstallConfigurationTable, 2, &recorder_table_guid,
			       (void *)(UINTN)(rec.phys + p->header_off));
	if (EFI_ERROR(st)) {
		sb_printf(msg, "cannot install the recorder's configuration table: %s",
			  efi_status_name(st));
		recorder_disarm();
		return st;
	}
	rec.table_installed = true;
	if (source != PTREC_SRC_HW &&
	    EFI_ERROR(uefi_call_wrapper(BS->CreateEvent, 5, EVT_SIGNAL_EXIT_BOOT_SERVICES,
					TPL_NOTIFY, on_exit_boot_services, NULL, &rec.ebs)))
		rec.ebs = NULL;
	sb_printf(msg, "recorder armed: generation %llu, %llu KiB at 0x%llx-0x%llx (header at "
		       "0x%llx): %s",
		  (unsigned long long)h->generation, (unsigned long long)(rec.size >> 10),
		  (unsigned long long)rec.phys, (unsigned long long)(rec.phys + rec.size - 1),
		  (unsigned long long)(rec.phys + p->header_off), where);
	return EFI_SUCCESS;
}

const struct ptout_mem *recorder_trace_mem(void)
{
	return &rec.carve.mem;
}

/* The configuration the buffer was laid out for, and its layout. */
static void record_layout(const struct ptcfg_settings *set, uint64_t ctl, const struct ptout *out)
{
	struct ptrec_header *h = rec.h;
	h->rtit_ctl = ctl;
	h->cr3_match = set->cr3_match;
	h->nranges = set->nranges;
	for (unsigned i = 0; i < set->nranges && i < 4; i++) {
		h->addr_a[i] = set->addr_a[i];
		h->addr_b[i] = set->addr_b[i];
	}
	uint64_t used = ptout_record(out, h, sec(PTREC_SEC_LAYOUT));
	ptrec_section_done(h, PTREC_SEC_LAYOUT, rec.mem, used);
	seal();
}

/* ---- Intel PT through hw_trace ------------------------------------------ */

static struct hook_ctx {
	struct app *app;
	const struct recorder_opts *o;
	const struct traced_image *img;
} hctx;
static struct hw_hooks hooks;

static const struct ptout_mem *hk_place(void *ctx, const struct ptcfg_settings *set,
					struct strbuf *msg)
{
	struct hook_ctx *c = ctx;
	EFI_STATUS st = recorder_arm(c->app, c->o, PTREC_SRC_HW, ptout_carve_need(set),
				     ptout_carve_align(set), c->img, msg);
	if (EFI_ERROR(st))
		return NULL;
	con_printf("efipt: %s\n", msg->buf);
	sb_reset(msg);
	return &rec.carve.mem;
}

static void hk_laid_out(void *ctx, const struct ptcfg_settings *set, const struct ptout *out)
{
	(void)ctx;
	/* the nominal ratio for timing decoders (as hw_trace reads it at stop;
	 * a recorder may never stop): MSR_PLATFORM_INFO[15:8], behind the guard */
	uint64_t info;
	gp_guard_install();
	if (cpu_native_ops.rdmsr(cpu_native_ops.ctx, MSR_PLATFORM_INFO, &info) == 0)
		rec.h->nom_freq = (uint32_t)((info >> 8) & 0xff);
	gp_guard_remove();
	record_layout(set, set->ctl | RTIT_CTL_TRACEEN, out);
}

static void hk_started(void *ctx, uint64_t before, uint64_t after)
{
	(void)ctx;
	rec.h->flags |= PTREC_F_STARTED;
	rec.h->tsc_arm = before;
	rec.h->tsc_started = after;
	seal();
}

static void hk_at_exit(void *ctx, const struct rtit_engine *eng)
{
	(void)ctx;
	at_exit(eng);
}

static void hk_stopped(void *ctx, const struct rtit_engine *eng, uint64_t tsc)
{
	(void)ctx;
	if (!rec.armed)
		return;
	rec.h->flags |= PTREC_F_RETURNED;
	record_stop(eng, tsc);
	seal();
}

const struct hw_hooks *recorder_hooks(struct app *app, const struct recorder_opts *o,
				      const struct traced_image *img)
{
	hctx = (struct hook_ctx){ app, o, img };
	hooks = (struct hw_hooks){
		.place = hk_place, .laid_out = hk_laid_out, .started = hk_started,
		.stop_at_exit = o->stop_at_exit, .at_exit = hk_at_exit, .stopped = hk_stopped,
		.ctx = &hctx,
	};
	return &hooks;
}

/* ---- the synthetic source ----------------------------------------------- */

/* Where ring offset pos is, as OUTPUT_BASE/OUTPUT_MASK_PTRS would say it
 * (33.2.8.7, 33.2.8.8): what a CPU stopped there reads back. */
static void position_msrs(const struct ptout *o, uint64_t pos, uint64_t *base, uint64_t *mask)
{
	unsigned i = 0;
	while (i + 1 < o->nreg && pos >= o->reg[i].size) {
		pos -= o->reg[i].size;
		i++;
	}
	if (o->output == PTCFG_OUT_SINGLE) {
		*base = o->reg[0].base;
		*mask = (o->reg[0].size - 1) | RTIT_MASK_LOWER | (pos << 32);
		return;
	}
	*base = o->tab[o->reg[i].table].phys;
	*mask = ((uint64_t)o->reg[i].entry << RTIT_MASK_TABLE_OFFSET_SHIFT) | RTIT_MASK_LOWER |
		(pos << 32);
}

EFI_STATUS recorder_synthetic(const struct ptcfg_settings *set, uint64_t ctl,
			      const uint8_t *stream, uint64_t len, uint64_t seed, uint64_t insns,
			      uint64_t *tail_off, struct strbuf *msg)
{
	ptout_init(&rec.out, rec.reg, SYNTH_REGIONS, rec.tab, SYNTH_TABLES);
	if (ptout_build(&rec.out, set, &rec.carve.mem, msg))
		return EFI_OUT_OF_RESOURCES;
	record_layout(set, ctl, &rec.out);
	/* byte i of the stream is where a CPU in wrap mode put it: ring offset
	 * i mod size; the last lap survives */
	uint64_t size = rec.out.size;
	uint64_t from = len > size ? len - size : 0;
	for (uint64_t i = from; i < len;) {
		uint64_t o = i % size, r = 0;
		while (r + 1 < rec.out.nreg && o >= rec.out.reg[r].size)
			o -= rec.out.reg[r++].size;
		uint64_t n = rec.out.reg[r].size - o;
		if (n > len - i)
			n = len - i;
		CopyMem((void *)(UINTN)(rec.out.reg[r].base + o), stream + i, n);
		i += n;
	}
	struct ptrec_header *h = rec.h;
	h->flags |= PTREC_F_STARTED;
	/* the synthesizer's clock: TSC = 3 * trace offset + 1000, taken after
	 * the first PSB (core/pt_synth.c) */
	h->tsc_arm = 1000;
	h->tsc_started = 1000 + 3 * 16;
	h->synth_seed = seed;
	h->synth_insns = insns;
	h->synth_bytes = len;
	rec.synth_pos = len % size;
	seal();
	*tail_off = from;
	return EFI_SUCCESS;
}

void recorder_returned(void)
{
	if (!rec.armed)
		return;
	struct ptrec_header *h = rec.h;
	h->flags |= PTREC_F_RETURNED;
	if (h->source == PTREC_SRC_SYNTHETIC && rec.out.nreg) {
		/* the synthesizer "stops" here: where the next byte would go */
		h->flags |= PTREC_F_STOPPED;
		position_msrs(&rec.out, rec.synth_pos, &h->stop_base, &h->stop_mask);
		h->stop_status = 0;
	}
	seal();
}

void recorder_finish(void)
{
	if (rec.ebs)
		uefi_call_wrapper(BS->CloseEvent, 1, rec.ebs);
	rec.ebs = NULL;
	if (rec.handles)
		FreePool(rec.handles);
	rec.handles = NULL;
}

void recorder_disarm(void)
{
	recorder_finish();
	if (rec.table_installed)
		uefi_call_wrapper(BS->InstallConfigurationTable, 2, &recorder_table_guid, NULL);
	if (rec.var_written)
		uefi_call_wrapper(RT->SetVariable, 5, L"" PTREC_VAR_NAME, &recorder_vendor_guid, 0, 0,
				  NULL);
	if (rec.mem)
		uefi_call_wrapper(BS->FreePages, 2, (EFI_PHYSICAL_ADDRESS)rec.phys, rec.size / PAGE);
	efipt_memset(&rec, 0, sizeof(rec));
}

void recorder_manifest(struct run *run)
{
	if (!rec.armed)
		return;
	const struct ptrec_header *h = rec.h;
	char place[300];
	struct strbuf pb;
	sb_init(&pb, place, sizeof(place));
	sb_json_escape(&pb, h->placement);
	run_member(run, "recorder",
		   "{\"region\": \"0x%llx\", \"size\": %llu, \"header\": \"0x%llx\", "
		   "\"generation\": %llu, \"boot\": %u, \"variable\": \"%s-%s\", "
		   "\"stop_at_exit\": %s, \"exit_boot_services\": %s, \"placement\": \"%s\"}",
		   (unsigned long long)rec.phys, (unsigned long long)rec.size,
		   (unsigned long long)(rec.phys + h->header_off), (unsigned long long)h->generation,
		   h->boot, PTREC_VAR_NAME, PTREC_VENDOR_GUID_TEXT,
		   (h->flags & PTREC_F_STOP_AT_EXIT) ? "true" : "false",
		   (h->flags & PTREC_F_EXIT) ? "true" : "false", place);
}

uint64_t recorder_synthetic_pos(void)
{
	return rec.synth_pos;
}
