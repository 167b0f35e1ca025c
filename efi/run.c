/* Run directory and manifest; see run.h and docs/format.md. */
#include <efi.h>
#include <efilib.h>

#include "core/mem.h"
#include "core/run_manifest.h"
#include "efi/console.h"
#include "efi/run.h"

static void utf16_path(CHAR16 *out, UINTN cap, const char *a, const char *b)
{
	char tmp[128];
	struct strbuf sb;
	sb_init(&sb, tmp, sizeof(tmp));
	sb_puts(&sb, a);
	sb_puts(&sb, b);
	ascii_to_ucs2(out, cap, tmp);
}

EFI_STATUS run_create(struct run *run, struct esp *esp, const char *command,
		      const char *cmdline)
{
	efipt_memset(run, 0, sizeof(*run));
	run->esp = esp;
	run->command = command;
	run->cmdline = cmdline;
	run->result = RUN_FAILED;
	run->status = EFI_ABORTED;
	efipt_memcpy(run->message, "run did not finish", 19);
	sb_init(&run->extra_sb, run->extra, sizeof(run->extra));

	EFI_TIME t;
	char stamp[24];
	struct strbuf sb;
	sb_init(&sb, stamp, sizeof(stamp));
	if (!EFI_ERROR(uefi_call_wrapper(RT->GetTime, 2, &t, NULL))) {
		sb_printf(&sb, "%04u%02u%02u-%02u%02u%02u", t.Year, t.Month, t.Day, t.Hour,
			  t.Minute, t.Second);
		struct strbuf st;
		sb_init(&st, run->started, sizeof(run->started));
		sb_printf(&st, "%04u-%02u-%02uT%02u:%02u:%02u", t.Year, t.Month, t.Day, t.Hour,
			  t.Minute, t.Second);
	} else {
		sb_puts(&sb, "00000000-000000");
		efipt_memcpy(run->started, "unknown", 8);
	}

	EFI_STATUS st = esp_mkdir(esp, L"\\efipt");
	if (EFI_ERROR(st))
		return st;
	/* same second twice (or no RTC): add a counter, still sorting correctly */
	for (unsigned n = 0; n < 1000; n++) {
		struct strbuf idb;
		sb_init(&idb, run->id, sizeof(run->id));
		sb_printf(&idb, "%s-%03u", stamp, n);
		utf16_path(run->dir, sizeof(run->dir) / sizeof(CHAR16), "\\efipt\\", run->id);
		if (!esp_exists(esp, run->dir))
			return esp_mkdir(esp, run->dir);
	}
	return EFI_ACCESS_DENIED;
}

static void record_file(struct run *run, const char *name, UINT64 size, EFI_STATUS st)
{
	/* a file written again (images.json after a trace) has one entry; a
	 * failed rewrite left the earlier one (esp_write_atomic) */
	unsigned i = 0;
	while (i < run->nfiles && efipt_strcmp(run->files[i].name, name))
		i++;
	bool kept = i < run->nfiles && EFI_ERROR(st) && !EFI_ERROR(run->files[i].status);
	if (i < RUN_MAX_FILES && !kept) {
		struct run_file *f = &run->files[i];
		if (i == run->nfiles)
			run->nfiles++;
		struct strbuf sb;
		sb_init(&sb, f->name, sizeof(f->name));
		sb_puts(&sb, name);
		f->size = size;
		f->status = st;
	}
	if (EFI_ERROR(st))
		con_printf("efipt: writing \\efipt\\%s\\%s failed: %s\n", run->id, name,
			   efi_status_name(st));
}

EFI_STATUS run_write_file(struct run *run, const char *name, const void *data, UINTN len)
{
	CHAR16 wname[48];
	ascii_to_ucs2(wname, 48, name);
	EFI_STATUS st = esp_write_atomic(run->esp, run->dir, wname, data, len);
	record_file(run, name, len, st);
	return st;
}

EFI_STATUS run_file_begin(struct run *run, const char *name, UINT64 total, struct esp_file *w)
{
	CHAR16 wname[48];
	ascii_to_ucs2(wname, 48, name);
	EFI_STATUS st = esp_file_create(run->esp, run->dir, wname, total, w);
	if (EFI_ERROR(st))
		record_file(run, name, total, st);
	return st;
}

EFI_STATUS run_file_end(struct run *run, const char *name, struct esp_file *w, EFI_STATUS st)
{
	if (EFI_ERROR(st))
		esp_file_abort(w);
	else
		st = esp_file_commit(run->esp, w);
	record_file(run, name, w->done, st);
	return st;
}

unsigned run_discard_files(struct run *run)
{
	unsigned n = 0;
	for (unsigned i = 0; i < run->nfiles; i++) {
		struct run_file *f = &run->files[i];
		CHAR16 wname[48];
		ascii_to_ucs2(wname, 48, f->name);
		if (!EFI_ERROR(f->status) && !EFI_ERROR(esp_delete(run->esp, run->dir, wname))) {
			f->status = EFI_ABORTED;
			n++;
		}
	}
	return n;
}

void run_set_result(struct run *run, enum run_result result, EFI_STATUS st,
		    const char *message)
{
	run->result = result;
	run->status = st;
	struct strbuf sb;
	sb_init(&sb, run->message, sizeof(run->message));
	sb_puts(&sb, message);
}

void run_member(struct run *run, const char *key, const char *fmt, ...)
{
	if (run->extra_sb.len)
		sb_puts(&run->extra_sb, ",\n  ");
	sb_printf(&run->extra_sb, "\"%s\": ", key);
	__builtin_va_list ap;
	__builtin_va_start(ap, fmt);
	sb_vprintf(&run->extra_sb, fmt, ap);
	__builtin_va_end(ap);
}

void run_members(struct run *run, const char *text)
{
	if (run->extra_sb.len)
		sb_puts(&run->extra_sb, ",\n  ");
	sb_puts(&run->extra_sb, text);
}

EFI_STATUS run_write_manifest(struct run *run)
{
	UINTN cap = 64 * 1024;
	char *buf = AllocatePool(cap);
	if (!buf)
		return EFI_OUT_OF_RESOURCES;
	struct strbuf sb;
	sb_init(&sb, buf, cap);
	struct runmf_head head = { run->id, run->started, run->command, run->cmdline };
	runmf_open(&sb, &head);
	char fw[64];
	ucs2_to_ascii(fw, sizeof(fw), ST->FirmwareVendor ? ST->FirmwareVendor : L"");
	sb_puts(&sb, "  \"firmware\": {\"vendor\": ");
	sb_json_str(&sb, fw);
	sb_printf(&sb, ", \"revision\": \"0x%08x\", \"uefi\": \"%u.%u\"},\n",
		  ST->FirmwareRevision, ST->Hdr.Revision >> 16, (ST->Hdr.Revision & 0xffff) / 10);
	if (run->caps) {
		sb_puts(&sb, "  \"cpu\": ");
		ptcaps_json(run->caps, &sb);
		sb_puts(&sb, ",\n");
	}
	if (run->extra_sb.truncated)
		sb_puts(&sb, "  \"manifest_truncated\": true,\n");
	else if (run->extra_sb.len)
		sb_printf(&sb, "  %s,\n", run->extra);
	runmf_files_open(&sb);
	for (unsigned i = 0; i < run->nfiles; i++) {
		struct run_file *f = &run->files[i];
		runmf_file(&sb, i, f->name, f->size,
			   EFI_ERROR(f->status) ? efi_status_name(f->status) : "written");
	}
	runmf_close(&sb, run->nfiles, run_result_name(run->result), efi_status_name(run->status),
		    run->message);
	EFI_STATUS st = EFI_BUFFER_TOO_SMALL;
	if (!sb.truncated)
		st = esp_write_atomic(run->esp, run->dir, L"manifest.json", buf, sb.len);
	FreePool(buf);
	return st;
}
