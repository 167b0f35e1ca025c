/*
 * efipt.efi snapshot: write the sideband a decoder needs (memory map, loaded
 * images, code snapshots) without tracing: to inspect what is loaded, or to
 * decode a trace captured by other means with `efipt decode`.
 */
#include <efi.h>
#include <efilib.h>

#include "efi/app.h"
#include "efi/console.h"
#include "efi/fpdt_save.h"
#include "efi/sideband.h"

EFI_STATUS efi_parse_snapshot(struct app *app)
{
	if (app->argc > 1) {
		con_printf("efipt: snapshot takes no arguments, got '%s'\n", app->argv[1]);
		return EFI_INVALID_PARAMETER;
	}
	return EFI_SUCCESS;
}

EFI_STATUS efi_cmd_snapshot(struct app *app)
{
	app_detect_cpu(app);
	if (!app->have_run) {
		con_puts("efipt: snapshot needs a run directory to write to\n");
		return EFI_WRITE_PROTECTED;
	}
	struct sideband_stats s;
	EFI_STATUS st = sideband_write(&app->run, &s, NULL, 0, NULL);
	sideband_images_forget();
	EFI_STATUS fst = fpdt_save(&app->run);
	if (!EFI_ERROR(st))
		st = fst;
	char msg[160];
	struct strbuf sb;
	sb_init(&sb, msg, sizeof(msg));
	sb_printf(&sb, "%llu images, %llu code regions, %llu KiB of code saved",
		  (unsigned long long)s.images, (unsigned long long)s.regions,
		  (unsigned long long)(s.code_bytes >> 10));
	if (EFI_ERROR(st)) {
		sb_printf(&sb, "; a write failed: %s", efi_status_name(st));
		run_set_result(&app->run, RUN_FAILED, st, msg);
	} else {
		run_set_result(&app->run, RUN_OK, st, msg);
	}
	con_printf("efipt: %s\n", msg);
	return st;
}
