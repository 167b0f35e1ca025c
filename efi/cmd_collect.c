/*
 * efipt.efi collect: the firmware's own boot trace (edk2/EfiptPkg,
 * docs/edk2.md) as an ordinary run directory.
 *
 * EfiptDxe publishes a UEFI configuration table (core/fwtrace.h): the
 * record of the trace EfiptPei started once permanent memory was there, and
 * every image that loaded. It comes from memory efipt.efi did not write, so
 * it is believed only after: the table lies inside the memory map, its CRC
 * and layout check out (fwtrace_check), its trace buffer lies in reserved
 * memory of this boot's map, and a trace it says is still running is
 * running (IA32_RTIT_CTL as the table says). Then: a trace left running
 * (--stop-at never) is stopped (SDM 33.3.2.2), trace.pt is written straight
 * from the buffer, images.json from the table's images (PEI and DXE), the
 * code snapshots from the memory map plus the firmware-volume modules that
 * ran in place, cpuid.txt; the manifest's boot_trace says what the firmware
 * did, and why not where it did not trace. With the application processors
 * (--cpus) each one's trace is its own file, trace.cpuN.pt, listed in the
 * manifest's trace.traces with its APIC ID (docs/format.md "Several CPUs");
 * an AP that did not trace is listed in boot_trace.cpus with the reason.
 */
#include <efi.h>
#include <efilib.h>

#include "arch/x86_64/boot_trace.h"
#include "arch/x86_64/pt_msr.h"
#include "core/imgrec.h"
#include "core/mem.h"
#include "core/pt_rtit.h"
#include "efi/app.h"
#include "efi/console.h"
#include "efi/fpdt_save.h"
#include "efi/gp_guard.h"
#include "efi/sideband.h"

#define MAX_XIP 64 /* snapshot regions for modules that ran in place */

static const char collect_usage[] =
	"usage: efipt.efi collect\n"
	"\n"
	"Write the firmware's own boot trace to a run directory: the Intel PT trace\n"
	"EfiptPkg (EfiptPei, EfiptDxe) took of this boot from PEI memory discovery\n"
	"to its stop point, the images that loaded (PEI and DXE), code snapshots and\n"
	"CPUID. A trace the firmware left running (--stop-at never) is stopped here.\n"
	"With --cpus in the firmware's options each application processor's trace is\n"
	"trace.cpuN.pt beside the boot processor's trace.pt.\n"
	"Where the firmware did not trace, the run says why. Decode it on a host\n"
	"with 'efipt info/decode/top DIR --symbols BUILD-DIR' (docs/edk2.md).\n";

void efi_help_collect(void)
{
	con_puts(collect_usage);
}

EFI_STATUS efi_parse_collect(struct app *app)
{
	if (app->argc > 1) {
		con_printf("efipt: collect takes no arguments, got '%s' (see efipt.efi collect "
			   "--help)\n", app->argv[1]);
		return EFI_INVALID_PARAMETER;
	}
	return EFI_SUCCESS;
}

/* ---- the table ------------------------------------------------------------ */

/* The memory map's descriptor holding [base, base+size), or NULL (map freed by the caller). */
static EFI_MEMORY_DESCRIPTOR *map_find(EFI_MEMORY_DESCRIPTOR *map, UINTN n, UINTN dsize,
				       uint64_t base, uint64_t size)
{
	for (UINTN i = 0; i < n; i++) {
		EFI_MEMORY_DESCRIPTOR *d = (EFI_MEMORY_DESCRIPTOR *)((UINT8 *)map + i * dsize);
		uint64_t len = d->NumberOfPages * 4096ull;
		if (base >= d->PhysicalStart && size <= len && base - d->PhysicalStart <= len - size)
			return d;
	}
	return NULL;
}

struct memmap {
	EFI_MEMORY_DESCRIPTOR *d;
	UINTN n, dsize;
};

/* boottrace_check_memory: the buffer must be reserved memory of this boot */
static bool reserved(void *ctx, uint64_t base, uint64_t size)
{
	const struct memmap *m = ctx;
	EFI_MEMORY_DESCRIPTOR *d = map_find(m->d, m->n, m->dsize, base, size);
	return d && d->Type == EfiReservedMemoryType;
}

/*
 * The table, copied into pool memory (*out, FreePool) once it passed
 * fwtrace_check. EFI_NOT_FOUND: none; EFI_COMPROMISED_DATA with why: one
 * that cannot be believed.
 */
static EFI_STATUS find_table(struct fwtrace_rec **out, struct strbuf *why)
{
	EFI_GUID guid = FWTRACE_TABLE_GUID_INIT;
	const void *at = NULL;
	*out = NULL;
	for (UINTN i = 0; i < ST->NumberOfTableEntries; i++)
		if (!CompareMem(&ST->ConfigurationTable[i].VendorGuid, &guid, sizeof(guid)))
			at = ST->ConfigurationTable[i].VendorTable;
	if (!at)
		return EFI_NOT_FOUND;
	struct memmap m;
	UINTN key;
	UINT32 dver;
	m.d = LibMemoryMap(&m.n, &key, &m.dsize, &dver);
	if (!m.d) {
		sb_puts(why, "no memory map to check it against");
		return EFI_OUT_OF_RESOURCES;
	}
	EFI_STATUS st = EFI_COMPROMISED_DATA;
	uint64_t base = (UINTN)at;
	EFI_MEMORY_DESCRIPTOR *d = map_find(m.d, m.n, m.dsize, base, sizeof(struct fwtrace_rec));
	if (!d) {
		sb_printf(why, "the table at 0x%llx is not in the memory map", (unsigned long long)base);
		goto out;
	}
	/* size from the header, then the whole record inside the same region */
	uint32_t size = ((const struct fwtrace_rec *)at)->size;
	if (size < sizeof(struct fwtrace_rec) || size > fwtrace_size_for(FWTRACE_MAX_IMAGES, FWTRACE_MAX_CPUS) ||
	    !map_find(m.d, m.n, m.dsize, base, size)) {
		sb_printf(why, "the table at 0x%llx says it is %u bytes: not a record that fits its "
			       "memory", (unsigned long long)base, size);
		goto out;
	}
	struct fwtrace_rec *copy = AllocatePool(size);
	if (!copy) {
		st = EFI_OUT_OF_RESOURCES;
		sb_puts(why, "no memory for a copy of the table");
		goto out;
	}
	CopyMem(copy, (const void *)at, size);
	if (fwtrace_check(copy, size, why)) {
		FreePool(copy);
		goto out;
	}
	if (boottrace_check_memory(copy, reserved, &m, why)) {
		sb_puts(why, " in this boot's memory map: a stale or forged table");
		FreePool(copy);
		goto out;
	}
	for (uint32_t k = 0; k < copy->ncpus; k++)
		if (boottrace_check_memory(&fwtrace_cpus(copy)[k], reserved, &m, why)) {
			sb_printf(why, " (CPU %u's record) in this boot's memory map: a stale or forged "
				       "table", fwtrace_cpus(copy)[k].cpu_number);
			FreePool(copy);
			goto out;
		}
	*out = copy;
	st = EFI_SUCCESS;
out:
	FreePool(m.d);
	return st;
}

static const char *source_word(const struct fwtrace_rec *r)
{
	return r->source == FWTRACE_SRC_SYNTHETIC	  ? "SYNTHETIC"
	       : (r->flags & FWTRACE_F_EMULATED) ? "EMULATED Intel PT"
						   : "Intel PT";
}

void collect_notice(void)
{
	struct fwtrace_rec *r;
	char why[200];
	struct strbuf ws;
	sb_init(&ws, why, sizeof(why));
	EFI_STATUS st = find_table(&r, &ws);
	if (st == EFI_NOT_FOUND)
		return;
	if (EFI_ERROR(st)) {
		con_printf("efipt: this firmware's boot trace table cannot be used: %s\n", why);
		return;
	}
	if (r->status == FWTRACE_RUNNING || r->status == FWTRACE_STOPPED)
		con_printf("efipt: the firmware traced this boot (%s, %s): 'efipt.efi collect' writes "
			   "it to a run directory\n", source_word(r), fwtrace_status_name(r->status));
	else
		con_printf("efipt: the firmware's boot trace: %s: %s\n", fwtrace_status_name(r->status),
			   r->reason);
	FreePool(r);
}

/* ---- the run directory ------------------------------------------------- */

static void fail(struct app *app, enum run_result result, EFI_STATUS st, const char *why)
{
	con_printf("efipt: %s\n", why);
	run_set_result(&app->run, result, st, why);
}

static void guid_text(const uint8_t *g, char *out, UINTN cap)
{
	struct strbuf sb;
	sb_init(&sb, out, cap);
	sb_printf(&sb, "%08X-%04X-%04X-%02X%02X-%02X%02X%02X%02X%02X%02X",
		  (unsigned)(g[0] | g[1] << 8 | g[2] << 16 | (unsigned)g[3] << 24),
		  (unsigned)(g[4] | g[5] << 8), (unsigned)(g[6] | g[7] << 8), g[8], g[9], g[10],
		  g[11], g[12], g[13], g[14], g[15]);
}

static bool zero_guid(const uint8_t *g)
{
	for (unsigned i = 0; i < 16; i++)
		if (g[i])
			return false;
	return true;
}

/* images.json from the table: docs/format.md's members, plus "phase",
 * "unloaded" (gone by the stop point) and "kept" (unloaded while tracing,
 * its pages kept: the code that ran is still there, in a snapshot) */
static EFI_STATUS write_images(struct app *app, struct fwtrace_rec *r)
{
	UINTN cap = 256 + (UINTN)r->nimages * 900;
	char *buf = AllocatePool(cap);
	if (!buf)
		return EFI_OUT_OF_RESOURCES;
	struct strbuf sb;
	sb_init(&sb, buf, cap);
	sb_puts(&sb, "{\"images\": [");
	const struct fwtrace_image *im = fwtrace_images(r);
	for (uint32_t i = 0; i < r->nimages; i++) {
		const struct fwtrace_image *m = &im[i];
		char g[40], path[48];
		guid_text(m->guid, g, sizeof(g));
		struct strbuf pb;
		sb_init(&pb, path, sizeof(path));
		if (!zero_guid(m->guid))
			sb_printf(&pb, "FvFile(%s)", g);
		sb_printf(&sb, "%s\n  {\"name\": ", i ? "," : "");
		sb_json_str(&sb, m->name[0] ? m->name : path[0] ? path : "?");
		sb_printf(&sb, ", \"base\": \"0x%llx\", \"size\": %llu, \"code_type\": \"%s\", "
			       "\"path\": ",
			  (unsigned long long)m->base, (unsigned long long)m->size,
			  m->code_type == FWTRACE_CODE_FIRMWARE_VOLUME ? "FirmwareVolume"
								    : uefi_memtype_name(m->code_type));
		sb_json_str(&sb, path);
		sb_puts(&sb, ", \"pdb\": ");
		sb_json_str(&sb, m->pdb);
		if (m->entry)
			sb_printf(&sb, ", \"entry\": \"0x%llx\"", (unsigned long long)m->entry);
		sb_printf(&sb, ", \"phase\": \"%s\"%s%s}", (m->flags & FWTRACE_IMG_PEI) ? "PEI" : "DXE",
			  (m->flags & FWTRACE_IMG_UNLOADED) ? ", \"unloaded\": true" : "",
			  (m->flags & FWTRACE_IMG_KEPT) ? ", \"kept\": true" : "");
	}
	sb_puts(&sb, "\n]}\n");
	EFI_STATUS st = sb.truncated ? EFI_BUFFER_TOO_SMALL
				     : run_write_file(&app->run, "images.json", buf, sb.len);
	FreePool(buf);
	return st;
}

/* Snapshot regions for the modules that ran in place (flash, a volume in
 * memory), page-aligned, merged, none overlapping the map's code. */
static unsigned xip_regions(const struct fwtrace_rec *r, struct sideband_region *x)
{
	UINTN n, key, dsize;
	UINT32 dver;
	EFI_MEMORY_DESCRIPTOR *map = LibMemoryMap(&n, &key, &dsize, &dver);
	unsigned nx = 0;
	const struct fwtrace_image *im = fwtrace_images((struct fwtrace_rec *)r);
	for (uint32_t i = 0; i < r->nimages && nx < MAX_XIP; i++) {
		if (im[i].code_type != FWTRACE_CODE_FIRMWARE_VOLUME || !im[i].size)
			continue;
		uint64_t a = im[i].base & ~4095ull;
		uint64_t b = (im[i].base + im[i].size + 4095) & ~4095ull;
		if (b <= a)
			continue;
		bool clash = false;
		for (UINTN k = 0; map && k < n && !clash; k++) {
			EFI_MEMORY_DESCRIPTOR *d = (EFI_MEMORY_DESCRIPTOR *)((UINT8 *)map + k * dsize);
			uint64_t e = d->PhysicalStart + d->NumberOfPages * 4096ull;
			clash = (d->Type == EfiLoaderCode || d->Type == EfiBootServicesCode ||
				 d->Type == EfiRuntimeServicesCode) &&
				a < e && d->PhysicalStart < b;
		}
		if (clash)
			continue;
		/* merge with a region it touches */
		unsigned k;
		for (k = 0; k < nx; k++) {
			uint64_t xa = x[k].phys, xb = x[k].phys + x[k].pages * 4096;
			if (a <= xb && xa <= b) {
				x[k].phys = a < xa ? a : xa;
				x[k].pages = ((b > xb ? b : xb) - x[k].phys) / 4096;
				break;
			}
		}
		if (k == nx)
			x[nx++] = (struct sideband_region){ a, (b - a) / 4096, "FirmwareVolume" };
	}
	if (map)
		FreePool(map);
	return nx;
}

static EFI_STATUS write_span(void *ctx, const void *data, uint64_t len)
{
	return esp_file_append(ctx, data, (UINTN)len);
}

struct spill {
	struct esp_file *f;
	EFI_STATUS st;
};

static int spill_span(void *ctx, uint64_t phys, uint64_t len)
{
	struct spill *s = ctx;
	s->st = write_span(s->f, (const void *)(UINTN)phys, len);
	return EFI_ERROR(s->st) ? 1 : 0;
}

/* Live memory, identity-mapped: where the CPU wrote the trace. */
static void read_phys(void *ctx, uint64_t phys, void *dst, size_t len)
{
	(void)ctx;
	CopyMem(dst, (void *)(UINTN)phys, len);
}

static struct boottrace_work work;

/* A trace the table says runs (--stop-at never): is it this boot's, and
 * running as the table says? Then stop it. */
static EFI_STATUS stop_running(struct app *app, struct fwtrace_rec *r, struct strbuf *why)
{
	if (r->source != FWTRACE_SRC_HW || app->caps.absent != PTCAPS_PRESENT) {
		sb_puts(why, "the table says Intel PT still runs, but this CPU has none (");
		ptcaps_absent_line(&app->caps, why);
		sb_puts(why, "): a stale or forged table");
		return EFI_COMPROMISED_DATA;
	}
	if (boottrace_adopt(r, &work, &cpu_native_ops, why))
		return EFI_COMPROMISED_DATA;
	uint64_t ctl = 0;
	gp_guard_install();
	int rc = cpu_native_ops.rdmsr(cpu_native_ops.ctx, MSR_IA32_RTIT_CTL, &ctl);
	if (rc || ctl != (r->rtit_ctl | RTIT_CTL_TRACEEN)) {
		gp_guard_remove();
		sb_printf(why, "the table says Intel PT runs with IA32_RTIT_CTL=0x%llx, the CPU has "
			       "0x%llx: a stale table (or something else took PT over)",
			  (unsigned long long)(r->rtit_ctl | RTIT_CTL_TRACEEN), (unsigned long long)ctl);
		return EFI_COMPROMISED_DATA;
	}
	rc = boottrace_stop(r, &work, FWTRACE_STOP_COLLECT, why);
	uint64_t info;
	if (cpu_native_ops.rdmsr(cpu_native_ops.ctx, MSR_PLATFORM_INFO, &info) == 0) {
		r->have_nom = 1;
		r->nom_freq = (uint32_t)((info >> 8) & 0xff);
	}
	gp_guard_remove();
	con_printf("efipt: stopped the firmware's trace, still running at collect\n");
	return rc ? EFI_DEVICE_ERROR : EFI_SUCCESS;
}

/*
 * The size of an adopted record's trace. Under QEMU 10.0 an EMULATED trace
 * (a test build's PcdEfiptEmulatedCaps) read its output MSRs back as 0: the
 * trace is efipt qemu's (docs/qemu.md), this run's file is empty, and said.
 */
static int trace_extent(const struct fwtrace_rec *r, struct ptout_mem *mem,
			struct ptout_extent *ext)
{
	if (boottrace_extract(r, &work, mem, NULL, NULL, ext) == 0)
		return 0;
	if (!(r->flags & FWTRACE_F_EMULATED))
		return -1;
	efipt_memset(ext, 0, sizeof(*ext));
	con_printf("efipt: CPU %u: EMULATED Intel PT: the output MSRs read back as %llx/%llx (QEMU "
		   "reads them as 0): its trace is efipt qemu's, not in this run\n", r->cpu_number,
		   (unsigned long long)r->stop_base, (unsigned long long)r->stop_mask);
	return 0;
}

/* One CPU's trace file straight from its buffer (adopted in work). */
static EFI_STATUS write_cpu_trace(struct app *app, const struct fwtrace_rec *r, const char *name,
				  struct ptout_mem *mem, struct ptout_extent *ext)
{
	static struct esp_file f;
	EFI_STATUS st = run_file_begin(&app->run, name, ext->bytes, &f);
	if (!EFI_ERROR(st)) {
		struct spill s = { &f, EFI_SUCCESS };
		boottrace_extract(r, &work, mem, spill_span, &s, ext);
		st = run_file_end(&app->run, name, &f, s.st);
	}
	return st;
}

static void trace_entry(struct strbuf *sb, const struct fwtrace_rec *r, const char *name,
			const struct ptout_extent *ext)
{
	sb_printf(sb, "%s{\"cpu\": %u, \"file\": \"%s\", \"bytes\": %llu, \"apic_id\": \"0x%x\", "
		      "\"rtit\": ", sb->len > 1 ? ", " : "", r->cpu_number, name,
		  (unsigned long long)ext->bytes, r->apic_id);
	rtit_trace_json(&work.eng, ext, sb);
	sb_putc(sb, '}');
}

/*
 * The application processors' traces (trace.cpuN.pt) and their entries in
 * traces (which holds the boot processor's already). Returns the traces
 * written; *st the first failure.
 */
static unsigned write_ap_traces(struct app *app, struct fwtrace_rec *r, struct ptout_mem *mem,
				struct strbuf *traces, EFI_STATUS *st)
{
	unsigned n = 0;
	for (uint32_t k = 0; k < r->ncpus; k++) {
		struct fwtrace_rec *c = &fwtrace_cpus(r)[k];
		if (c->status != FWTRACE_STOPPED) {
			con_printf("efipt: CPU %u (APIC ID 0x%x): not traced (%s): %s\n", c->cpu_number,
				   c->apic_id, fwtrace_status_name(c->status), c->reason);
			continue;
		}
		char why[300], name[32];
		struct strbuf ws, nb;
		sb_init(&ws, why, sizeof(why));
		sb_init(&nb, name, sizeof(name));
		sb_printf(&nb, "trace.cpu%u.pt", c->cpu_number);
		struct ptout_extent ext;
		if (c->cpu_number == 0 || boottrace_adopt(c, &work, &cpu_native_ops, &ws) ||
		    trace_extent(c, mem, &ext)) {
			con_printf("efipt: CPU %u (APIC ID 0x%x): its record cannot be read back (%s): "
				   "not collected\n", c->cpu_number, c->apic_id,
				   c->cpu_number ? why : "CPU 0 is the boot processor's number");
			if (!EFI_ERROR(*st))
				*st = EFI_COMPROMISED_DATA;
			continue;
		}
		EFI_STATUS w = write_cpu_trace(app, c, name, mem, &ext);
		if (EFI_ERROR(w) && !EFI_ERROR(*st))
			*st = w;
		trace_entry(traces, c, name, &ext);
		con_printf("efipt: CPU %u (APIC ID 0x%x): %llu trace bytes%s%s%s\n", c->cpu_number,
			   c->apic_id, (unsigned long long)ext.bytes,
			   ext.wrapped ? ", wrapped (older trace overwritten)" : "",
			   ext.full ? ", buffer full (the trace stopped early)" : "",
			   ext.error ? ", IA32_RTIT_STATUS.Error set" : "");
		n++;
	}
	return n;
}

/* The manifest's trace and timing, trace.pt, and the APs' traces. */
static EFI_STATUS write_trace(struct app *app, struct fwtrace_rec *r, uint64_t *bytes)
{
	char why[300];
	struct strbuf ws;
	sb_init(&ws, why, sizeof(why));
	if (boottrace_adopt(r, &work, &cpu_native_ops, &ws)) {
		fail(app, RUN_FAILED, EFI_COMPROMISED_DATA, why);
		return EFI_COMPROMISED_DATA;
	}
	struct ptout_mem mem = { 0 };
	mem.read = read_phys;
	struct ptout_extent ext;
	if (trace_extent(r, &mem, &ext)) {
		fail(app, RUN_FAILED, EFI_COMPROMISED_DATA,
		     "the table's output MSR values point nowhere in its buffer");
		return EFI_COMPROMISED_DATA;
	}
	static char tj[2048 + FWTRACE_MAX_CPUS * 2048];
	struct strbuf tb;
	sb_init(&tb, tj, sizeof(tj));
	rtit_trace_json(&work.eng, &ext, &tb);
	if (r->source == FWTRACE_SRC_SYNTHETIC && tb.len && !tb.truncated) {
		tb.len--; /* before the closing brace: what only a synthetic trace has */
		sb_printf(&tb, ",\"source\":\"synthetic\",\"seed\":%llu,\"insns\":%llu,\"start\":\"0x%llx\"}",
			  (unsigned long long)r->synth_seed, (unsigned long long)r->synth_insns,
			  (unsigned long long)r->synth_start);
	}
	char timing[160];
	struct strbuf mb;
	sb_init(&mb, timing, sizeof(timing));
	sb_printf(&mb, "{\"tsc_start\": \"0x%llx\", \"tsc_stop\": \"0x%llx\"",
		  (unsigned long long)r->tsc_start, (unsigned long long)r->tsc_stop);
	if (r->have_nom)
		sb_printf(&mb, ", \"nom_freq\": %u", r->nom_freq);
	sb_putc(&mb, '}');
	run_member(&app->run, "timing", "%s", timing);

	/* straight from the buffer: nothing to copy, whatever its size */
	EFI_STATUS st = write_cpu_trace(app, r, "trace.pt", &mem, &ext);
	*bytes = ext.bytes;
	con_printf("efipt: %s%llu trace bytes%s%s%s\n", r->ncpus ? "CPU 0: " : "",
		   (unsigned long long)ext.bytes,
		   ext.wrapped ? ", wrapped (older trace overwritten)" : "",
		   ext.full ? ", buffer full (the trace stopped early)" : "",
		   ext.error ? ", IA32_RTIT_STATUS.Error set" : "");
	if (r->ncpus && !tb.truncated && tb.len) {
		/* CPU 0's members, then every CPU's trace (docs/format.md "Several CPUs") */
		static char list[FWTRACE_MAX_CPUS * 2048 + 2048];
		struct strbuf lb;
		sb_init(&lb, list, sizeof(list));
		sb_putc(&lb, '[');
		trace_entry(&lb, r, "trace.pt", &ext);
		unsigned n = 1 + write_ap_traces(app, r, &mem, &lb, &st);
		sb_putc(&lb, ']');
		tb.len--;
		sb_printf(&tb, ", \"cpus\": %u, \"traces\": %s}", n, list);
		if (lb.truncated)
			tb.truncated = true;
	}
	if (!tb.truncated)
		run_member(&app->run, "trace", "%s", tj);
	return st;
}

EFI_STATUS efi_cmd_collect(struct app *app)
{
	app_detect_cpu(app);
	struct fwtrace_rec *r;
	char why[400];
	struct strbuf ws;
	sb_init(&ws, why, sizeof(why));
	EFI_STATUS st = find_table(&r, &ws);
	if (st == EFI_NOT_FOUND) {
		fail(app, RUN_FAILED, st, "no firmware boot trace: this firmware publishes no EfiptPkg "
					  "table (EfiptDxe missing? docs/edk2.md)");
		return st;
	}
	if (EFI_ERROR(st)) {
		char msg[500];
		struct strbuf mb;
		sb_init(&mb, msg, sizeof(msg));
		sb_printf(&mb, "the firmware's boot trace table is refused: %s", why);
		fail(app, RUN_FAILED, st, msg);
		return st;
	}
	con_printf("efipt: firmware boot trace: %s, %s, stop at %s, %u images%s%s\n",
		   fwtrace_status_name(r->status), source_word(r), fwtrace_stop_name(r->stop_at),
		   r->nimages, r->reason[0] ? "; " : "", r->reason);
	if (r->status == FWTRACE_RUNNING) {
		st = stop_running(app, r, &ws);
		if (EFI_ERROR(st)) {
			fail(app, RUN_FAILED, st, why);
			FreePool(r);
			return st;
		}
	}
	uint64_t bytes = 0;
	EFI_STATUS trace_st = EFI_SUCCESS;
	bool traced = r->status == FWTRACE_STOPPED;
	if (traced) {
		trace_st = write_trace(app, r, &bytes);
		if (trace_st == EFI_COMPROMISED_DATA) {
			FreePool(r);
			return trace_st;
		}
	}
	bool markers = (r->flags & FWTRACE_F_MARKERS) != 0;
	if (markers)
		run_member(&app->run, "trace", "{\"source\": \"qemu\", \"markers\": \"EPT1/EPT0\", "
					       "\"tcg\": true, \"firmware\": true}");
	static char bj[2048];
	struct strbuf bb;
	sb_init(&bb, bj, sizeof(bj));
	fwtrace_json(r, &bb);
	run_member(&app->run, "boot_trace", "%s", bj);
	EFI_STATUS side = write_images(app, r);
	static struct sideband_region xip[MAX_XIP];
	unsigned nx = xip_regions(r, xip);
	struct sideband_stats ss;
	EFI_STATUS code = sideband_write_code(&app->run, &ss, xip, nx);
	fpdt_save(&app->run);
	if (!EFI_ERROR(side))
		side = code;

	char msg[600];
	struct strbuf mb;
	sb_init(&mb, msg, sizeof(msg));
	if (traced) {
		sb_printf(&mb, "%s trace of this boot from PEI to %s: %llu bytes, %u images",
			   source_word(r), fwtrace_stop_name(r->stopped_at), (unsigned long long)bytes,
			   r->nimages);
		if (EFI_ERROR(trace_st))
			sb_printf(&mb, "; writing trace.pt failed: %s", efi_status_name(trace_st));
		st = trace_st;
	} else if (markers) {
		sb_printf(&mb, "no Intel PT (%s); the firmware ran the EPT1/EPT0 trace markers from PEI "
			       "to %s: efipt qemu writes the trace", r->reason,
			  fwtrace_stop_name(r->stopped_at));
		st = EFI_SUCCESS;
	} else {
		sb_printf(&mb, "the firmware did not trace this boot (%s): %s",
			  fwtrace_status_name(r->status), r->reason);
		st = EFI_UNSUPPORTED;
	}
	if (!EFI_ERROR(st) && EFI_ERROR(side)) {
		sb_printf(&mb, "; writing the images or code snapshots failed: %s",
			  efi_status_name(side));
		st = side;
	}
	con_printf("efipt: %s\n", msg);
	run_set_result(&app->run,
		       st == EFI_UNSUPPORTED ? RUN_UNSUPPORTED : EFI_ERROR(st) ? RUN_FAILED : RUN_OK, st,
		       msg);
	FreePool(r);
	return st;
}
