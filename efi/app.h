/* State of one efipt.efi invocation, shared by the firmware commands. */
#ifndef EFIPT_EFI_APP_H
#define EFIPT_EFI_APP_H

#include <efi.h>

#include "core/cpuid_set.h"
#include "core/pt_caps.h"
#include "efi/fs.h"
#include "efi/run.h"

#define APP_MAX_ARGS 64

struct app {
	EFI_HANDLE image_handle;
	EFI_LOADED_IMAGE *image;
	struct esp esp;
	struct run run;
	bool have_run;
	/* the command's own arguments: argv[0] is the command name */
	int argc;
	char *argv[APP_MAX_ARGS + 1];
	char cmdline[4096];     /* as received (comments dropped), for the manifest */
	char cmdline_words[4096]; /* cmdline split into argv's words */
	const char *args_source; /* "load options", "efipt.args[, ...]", "none" */
	struct cpuid_set cpuid;
	struct ptcaps caps;
	EFI_STATUS watchdog_st;  /* turning the watchdog timer off */
};

/* Turn the UEFI watchdog timer off (at start, and again after traced code
 * ran: it may have armed its own). */
EFI_STATUS app_watchdog_off(void);

/* Read CPUID into app->cpuid/app->caps, write cpuid.txt to the run dir. */
void app_detect_cpu(struct app *app);

EFI_STATUS efi_parse_caps(struct app *app);
EFI_STATUS efi_cmd_caps(struct app *app);
EFI_STATUS efi_parse_snapshot(struct app *app);
EFI_STATUS efi_cmd_snapshot(struct app *app);
EFI_STATUS efi_parse_trace(struct app *app);
void efi_help_trace(void);
EFI_STATUS efi_cmd_trace(struct app *app);
EFI_STATUS efi_parse_recover(struct app *app);
void efi_help_recover(void);
EFI_STATUS efi_cmd_recover(struct app *app);
EFI_STATUS efi_parse_selftest(struct app *app);
EFI_STATUS efi_cmd_selftest(struct app *app);
/* the firmware's own boot trace (edk2/EfiptPkg): efi/cmd_collect.c, efi/cmd_arm.c */
EFI_STATUS efi_parse_collect(struct app *app);
EFI_STATUS efi_cmd_collect(struct app *app);
void efi_help_collect(void);
EFI_STATUS efi_parse_arm(struct app *app);
EFI_STATUS efi_cmd_arm(struct app *app);
void efi_help_arm(void);
/* One line when the firmware published a boot trace (before other commands). */
void collect_notice(void);

#endif
