/*
 * efipt.efi recover: the flight recorder's trace, after a warm reset (or in
 * the boot that armed it), as an ordinary run directory (docs/recorder.md):
 * the variable, this boot's memory map (the region must be free memory,
 * which recover then claims, or armed in this boot), the header and its
 * sections (core/recorder.c), the end of the trace (recorded at stop, the
 * output MSRs where they survived, or the newest PSB+ by TSC), then
 * trace.pt, the code snapshots, images.json, memmap.json and cpuid.txt of
 * the arming CPU, and a manifest that says it was recovered, from which
 * boot and how the end was found.
 */
#include <efi.h>
#include <efilib.h>

#include "arch/x86_64/cpu_ops.h"
#include "arch/x86_64/pt_msr.h"
#include "core/mem.h"
#include "efi/app.h"
#include "efi/console.h"
#include "efi/gp_guard.h"
#include "efi/recorder.h"

#define PAGE 4096ull
#define TEXT_CAP (1u << 20)

static struct ptrec rec;
static struct recorder_found found;

EFI_STATUS efi_parse_recover(struct app *app)
{
	if (app->argc > 1) {
		con_printf("efipt: recover takes no arguments, got '%s' (see efipt.efi recover "
			   "--help)\n",
			   app->argv[1]);
		return EFI_INVALID_PARAMETER;
	}
	return EFI_SUCCESS;
}

void efi_help_recover(void)
{
	con_puts("usage: efipt.efi recover\n"
		 "\n"
		 "Write the flight recorder's trace (trace --recorder) to a run directory,\n"
		 "after a warm reset or in the boot that armed it. The recorder is found\n"
		 "through the UEFI variable " PTREC_VAR_NAME "-" PTREC_VENDOR_GUID_TEXT ";\n"
		 "its region must be free memory in this boot's memory map (recover claims\n"
		 "it while it reads) and its header, checksums and generation must hold.\n"
		 "The end of a wrapped trace comes from the stop state efipt recorded, else\n"
		 "from the output MSRs where the CPU kept them over the reset\n"
		 "(CPUID.(14H,0):EBX[2]) and they agree with the trace, else from the trace:\n"
		 "the newest PSB+ by its TSC (up to one PSB period after it is left out).\n"
		 "The manifest says which, from which boot, and how many bytes.\n");
}

/* The output MSRs, read where they can be the recorder's: Intel PT there,
 * and kept over a warm reset (CPUID.(14H,0):EBX[2], SDM 33.3.4). */
static void read_msrs(const struct ptcaps *caps, uint32_t source, struct ptrec_msrs *m,
		      struct strbuf *notes)
{
	efipt_memset(m, 0, sizeof(*m));
	if (source != PTREC_SRC_HW) {
		sb_puts(notes, "output MSRs not read: no CPU wrote this trace\n");
		return;
	}
	if (caps->absent != PTCAPS_PRESENT) {
		sb_puts(notes, "output MSRs not read: no Intel PT on this CPU\n");
		return;
	}
	if (!caps->ip_filter) {
		sb_puts(notes, "output MSRs not read: this CPU clears them on a warm reset "
			       "(CPUID.(14H,0):EBX[2]=0)\n");
		return;
	}
	gp_guard_install();
	const struct cpu_ops *o = &cpu_native_ops;
	int f = o->rdmsr(o->ctx, MSR_IA32_RTIT_CTL, &m->ctl) ||
		o->rdmsr(o->ctx, MSR_IA32_RTIT_STATUS, &m->status) ||
		o->rdmsr(o->ctx, MSR_IA32_RTIT_OUTPUT_BASE, &m->base) ||
		o->rdmsr(o->ctx, MSR_IA32_RTIT_OUTPUT_MASK_PTRS, &m->mask);
	gp_guard_remove();
	if (f)
		sb_puts(notes, "output MSRs not read: RDMSR faulted (#GP)\n");
	m->valid = !f;
}

struct spill {
	struct esp_file f;
	uint64_t phys;
	EFI_STATUS st;
};

static int write_span(void *ctx, uint64_t off, uint64_t len)
{
	struct spill *s = ctx;
	s->st = esp_file_append(&s->f, (const void *)(UINTN)(s->phys + off), (UINTN)len);
	return EFI_ERROR(s->st) ? 1 : 0;
}

static EFI_STATUS first_error(EFI_STATUS a, EFI_STATUS b)
{
	return EFI_ERROR(a) ? a : b;
}

/* Every file of the run directory from the opened region. */
static EFI_STATUS write_files(struct run *run, const struct ptrec_end *e, bool have_trace,
			      char *text)
{
	EFI_STATUS st = EFI_SUCCESS;
	struct strbuf sb;
	if (have_trace) {
		struct spill s = { .phys = found.var.region_phys, .st = EFI_SUCCESS };
		s.st = run_file_begin(run, "trace.pt", e->len, &s.f);
		if (!EFI_ERROR(s.st)) {
			ptrec_trace_spans(&rec, e, write_span, &s);
			s.st = run_file_end(run, "trace.pt", &s.f, s.st);
		}
		st = s.st;
	}
	sb_init(&sb, text, TEXT_CAP);
	ptrec_images_json(&rec, &sb);
	st = first_error(st, sb.truncated ? EFI_BUFFER_TOO_SMALL
					  : run_write_file(run, "images.json", text, sb.len));
	sb_init(&sb, text, TEXT_CAP);
	ptrec_memmap_json(&rec, &sb);
	st = first_error(st, sb.truncated ? EFI_BUFFER_TOO_SMALL
					  : run_write_file(run, "memmap.json", text, sb.len));
	struct ptrec_code c;
	for (unsigned i = 0; ptrec_code(&rec, i, &c); i++) {
		char name[48];
		struct strbuf nb;
		sb_init(&nb, name, sizeof(name));
		sb_printf(&nb, "mem-%016llx.bin", (unsigned long long)c.phys);
		st = first_error(st, run_write_file(run, name,
						    (const void *)(UINTN)(found.var.region_phys + c.off),
						    (UINTN)c.size));
	}
	static struct cpuid_set set;
	ptrec_cpuid(&rec, &set);
	sb_init(&sb, text, TEXT_CAP);
	cpuidtxt_write(&set, &sb);
	st = first_error(st, run_write_file(run, "cpuid.txt", text, sb.len));
	return st;
}

/* Recover the region found into run. */
static EFI_STATUS recover_into(struct app *app, struct run *run)
{
	static struct ptcaps now, then;
	static struct cpuid_set set;
	char why[1024], notes[1024], line[1200];
	struct strbuf wb, nb, lb;
	sb_init(&wb, why, sizeof(why));
	sb_init(&nb, notes, sizeof(notes));
	sb_init(&lb, line, sizeof(line));
	(void)app;
	cpuid_set_capture(&set, cpu_native_ops.cpuid, cpu_native_ops.ctx);
	ptcaps_parse(&now, &set);

	/* claim free memory before reading, so nothing of this boot lands there;
	 * the configuration table marks it as a recorder's for the rest of this
	 * boot (a recover that fails can be tried again: firmware may clear
	 * pages it frees, OVMF does) */
	bool claimed = false, earlier = false;
	int ost = PTREC_UNREADABLE;
	if (found.where == REC_FREE) {
		EFI_PHYSICAL_ADDRESS a = found.var.region_phys;
		EFI_STATUS st = uefi_call_wrapper(BS->AllocatePages, 4, AllocateAddress,
						  EfiReservedMemoryType,
						  found.var.region_size / PAGE, &a);
		if (EFI_ERROR(st)) {
			sb_printf(&lb, "cannot claim the recorder region 0x%llx (%llu pages): %s",
				  (unsigned long long)found.var.region_phys,
				  (unsigned long long)(found.var.region_size / PAGE),
				  efi_status_name(st));
			con_printf("efipt: %s\n", line);
			run_set_result(run, RUN_FAILED, st, line);
			return st;
		}
		claimed = true;
		uefi_call_wrapper(BS->InstallConfigurationTable, 2, &recorder_table_guid,
				  (void *)(UINTN)(found.var.region_phys + found.var.header_off));
	}
	struct ptrec_reader rd;
	recorder_reader(&found.var, &rd);
	ost = ptrec_open(&rec, &found.var, &rd, &wb);
	EFI_STATUS st = EFI_SUCCESS;
	if (ost) {
		st = ost == PTREC_NO_HEADER ? EFI_NOT_FOUND
		     : ost == PTREC_STALE   ? EFI_NOT_FOUND
					    : EFI_CRC_ERROR;
		sb_printf(&lb, "no trace recovered: %s", why);
		con_printf("efipt: %s\n", line);
		run_set_result(run, RUN_FAILED, st, line);
		goto out;
	}
	if (wb.len)
		con_printf("efipt: note%s\n", why);
	/* a region of an earlier boot that a failed recover of this boot claimed */
	earlier = found.where == REC_THIS_BOOT && rec.h.boot != recorder_boot_number();
	struct ptrec_msrs msrs;
	read_msrs(&now, rec.h.source, &msrs, &nb);
	struct ptrec_end e;
	bool have_trace = rec.nreg && ptrec_find_end(&rec, &msrs, &e, &nb) == 0;
	if (rec.nreg && !have_trace) {
		sb_printf(&lb, "no trace recovered: %s", notes);
		con_printf("efipt: %s\n", line);
		run_set_result(run, RUN_FAILED, EFI_NOT_FOUND, line);
		st = EFI_NOT_FOUND;
		goto out;
	}
	if (!have_trace)
		efipt_memset(&e, 0, sizeof(e));
	/* the arming CPU's facts */
	ptrec_cpuid(&rec, &set);
	ptcaps_parse(&then, &set);
	run->caps = &then;
	char *text = AllocatePool(TEXT_CAP);
	if (!text) {
		run_set_result(run, RUN_FAILED, EFI_OUT_OF_RESOURCES, "out of pool memory");
		st = EFI_OUT_OF_RESOURCES;
		goto out;
	}
	struct strbuf db;
	sb_init(&db, line, sizeof(line));
	ptrec_describe(&rec, &db);
	con_printf("efipt: %s\n", line);
	st = write_files(run, &e, have_trace, text);
	struct ptrec_here here = { 0, false, "efipt.efi recover", false };
	UINT64 c = 0;
	if (!EFI_ERROR(uefi_call_wrapper(BS->GetNextMonotonicCount, 1, &c)) && c >> 32) {
		here.boot = (uint32_t)(c >> 32);
		here.same_boot_known = rec.h.boot != 0;
	}
	struct strbuf mb;
	sb_init(&mb, text, TEXT_CAP);
	ptrec_manifest_members(&rec, &e, &here, notes, &mb);
	run_members(run, text);
	FreePool(text);
	sb_init(&lb, line, sizeof(line));
	if (have_trace)
		sb_printf(&lb, "recovered %s%llu bytes of trace of boot %u (end: %s%s)",
			  rec.h.source == PTREC_SRC_SYNTHETIC ? "SYNTHETIC " : "",
			  (unsigned long long)e.len, rec.h.boot, ptrec_end_how_name(e.how),
			  e.wrapped ? ", wrapped" : "");
	else
		sb_printf(&lb, "recovered the images of boot %u; no trace in the region (--source "
			       "qemu: the host's efipt-qemu.so recorded it)",
			  rec.h.boot);
	if (EFI_ERROR(st)) {
		/* an incomplete run is no result: leave only the manifest that says why */
		unsigned gone = run_discard_files(run);
		sb_printf(&lb, "; writing the run directory failed: %s (its %u files were removed; "
			       "the recorder stays armed)",
			  efi_status_name(st), gone);
	}
	con_printf("efipt: %s\n", line);
	if (notes[0])
		con_printf("efipt: %s", notes);
	run_set_result(run, EFI_ERROR(st) ? RUN_FAILED : RUN_OK, st, line);
	if (!EFI_ERROR(st)) {
		/* recovered: the start-of-run check stops mentioning it */
		struct ptrec_var v = found.var;
		v.state = PTREC_VAR_RECOVERED;
		ptrec_var_seal(&v);
		recorder_set_var(&v);
	}
out:
	if ((claimed || earlier) && !EFI_ERROR(st)) {
		/* recovered: the memory is this boot's again */
		uefi_call_wrapper(BS->InstallConfigurationTable, 2, &recorder_table_guid, NULL);
		uefi_call_wrapper(BS->FreePages, 2, (EFI_PHYSICAL_ADDRESS)found.var.region_phys,
				  found.var.region_size / PAGE);
	} else if (claimed && ost == PTREC_OK) {
		con_puts("efipt: the recorder region stays reserved for this boot: 'efipt.efi "
			 "recover' can try again\n");
	} else if (claimed) {
		/* nothing recoverable there: give it back */
		uefi_call_wrapper(BS->InstallConfigurationTable, 2, &recorder_table_guid, NULL);
		uefi_call_wrapper(BS->FreePages, 2, (EFI_PHYSICAL_ADDRESS)found.var.region_phys,
				  found.var.region_size / PAGE);
	}
	return st;
}

/* Refuse what cannot be read; EFI_SUCCESS when the region may be read. */
static EFI_STATUS check_found(struct run *run)
{
	EFI_STATUS st;
	switch (found.where) {
	case REC_FREE:
	case REC_THIS_BOOT:
		return EFI_SUCCESS;
	case REC_NONE: st = EFI_NOT_FOUND; break;
	case REC_BAD_VAR: st = EFI_VOLUME_CORRUPTED; break;
	case REC_IN_USE: st = EFI_ACCESS_DENIED; break;
	case REC_OUTSIDE: st = EFI_NOT_FOUND; break;
	default: st = EFI_ABORTED; break;
	}
	con_printf("efipt: %s\n", found.why);
	if (run)
		run_set_result(run, RUN_FAILED, st, found.why);
	return st;
}

EFI_STATUS efi_cmd_recover(struct app *app)
{
	recorder_find(&found);
	if (found.where != REC_NONE && found.var.state == PTREC_VAR_RECOVERED)
		con_puts("efipt: this recorder was recovered before; recovering it again\n");
	EFI_STATUS st = check_found(app->have_run ? &app->run : NULL);
	if (EFI_ERROR(st))
		return st;
	if (!app->have_run) {
		con_puts("efipt: recover: no run directory to write the trace to (--no-run-dir, or "
			 "the volume could not take one: see above); nothing was changed\n");
		return EFI_NOT_READY;
	}
	return recover_into(app, &app->run);
}

/* Is the found recorder one that trace --recorder must recover before it
 * arms? (Refusing with an error where arming must not go on.) */
static EFI_STATUS pending(bool *yes)
{
	*yes = false;
	if (found.where != REC_FREE && found.where != REC_THIS_BOOT)
		return EFI_SUCCESS; /* nothing there that could still be recovered */
	struct ptrec_reader rd;
	static struct ptrec_header h;
	char why[512];
	struct strbuf sb;
	sb_init(&sb, why, sizeof(why));
	recorder_reader(&found.var, &rd);
	if (ptrec_peek(&found.var, &rd, &h, &sb)) {
		if (found.var.state == PTREC_VAR_ARMED)
			con_printf("efipt: the recorder of boot %u is gone (%s): arming a new one\n",
				   found.var.boot, why);
		return EFI_SUCCESS;
	}
	if (found.where == REC_THIS_BOOT && h.boot == recorder_boot_number()) {
		if (!(h.flags & PTREC_F_RETURNED)) {
			con_printf("efipt: trace --recorder: a recorder armed in this boot (run %s) "
				   "is still tracing: one recorder at a time\n",
				   h.run_id);
			return EFI_ALREADY_STARTED;
		}
		/* its image returned and its run directory has the trace: replaced */
		uefi_call_wrapper(BS->FreePages, 2, (EFI_PHYSICAL_ADDRESS)found.var.region_phys,
				  found.var.region_size / PAGE);
		return EFI_SUCCESS;
	}
	*yes = found.var.state == PTREC_VAR_ARMED;
	return EFI_SUCCESS;
}

EFI_STATUS recover_pending(struct app *app)
{
	recorder_find(&found);
	bool yes;
	EFI_STATUS st = pending(&yes);
	if (EFI_ERROR(st) || !yes)
		return st;
	if (!app->have_run) {
		con_puts("efipt: trace --recorder: the trace of the last recorder is still in "
			 "memory and no run directory can be written: run 'efipt.efi recover' first\n");
		return EFI_ACCESS_DENIED;
	}
	con_puts("efipt: the last recorder's trace is in memory and was never recovered: "
		 "recovering it first\n");
	static struct run r;
	st = run_create(&r, &app->esp, "recover",
			"recover (before trace --recorder armed a new recorder)");
	if (EFI_ERROR(st)) {
		con_printf("efipt: cannot create a run directory for it: %s; not arming over it\n",
			   efi_status_name(st));
		return st;
	}
	st = recover_into(app, &r);
	EFI_STATUS ms = run_write_manifest(&r);
	if (!EFI_ERROR(st) && !EFI_ERROR(ms))
		con_printf("efipt: run directory \\efipt\\%s written (recovered)\n", r.id);
	else
		con_printf("efipt: recovering failed (%s): not arming over it; 'efipt.efi recover' "
			   "can try again\n",
			   efi_status_name(EFI_ERROR(st) ? st : ms));
	return EFI_ERROR(st) ? st : ms;
}
