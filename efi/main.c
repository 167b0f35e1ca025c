/*
 * efipt.efi — entry point. Reads the command line (UEFI Shell load options,
 * or efipt.args beside the image when booted without arguments), handles the
 * global options, runs one command, records the run directory, and powers
 * off or resets when asked.
 */
#include <efi.h>
#include <efilib.h>

#if __STDC_HOSTED__
#error "efipt.efi is built freestanding"
#endif

#include "core/version.h"
#include "core/cmdline.h"
#include "core/mem.h"
#include "efi/app.h"
#include "efi/console.h"
#include "efi/recorder.h"

static struct app the_app; /* large (CPUID set, run state): not on the stack */

static const char usage_text[] =
	"usage: efipt.efi [GLOBAL OPTIONS] [COMMAND [OPTIONS]]\n"
	"\n"
	"Intel Processor Trace for firmware and boot code, on bare metal.\n"
	"\n"
	"commands:\n"
	"  caps        report Intel PT capabilities of this CPU (default command)\n"
	"  trace       trace an image (or --connect) with Intel PT; 'trace --help'\n"
	"  selftest    check efipt itself on this machine; writes selftest.json and\n"
	"              selftest.xml (JUnit) for firmware CI\n"
	"  snapshot    save the memory map, loaded images and all code memory\n"
	"  collect     write the firmware's own boot trace (EfiptPkg) to a run directory\n"
	"  arm         choose what the firmware's boot trace records on the next boot\n"
	"  recover     write the flight recorder's trace (trace --recorder) to a run\n"
	"              directory after a warm reset; 'recover --help'\n"
	"\n"
	"global options:\n"
	"  --help      show this text and do nothing else\n"
	"  --version   show the version\n"
	"  --shutdown  power the machine off when done (unattended rigs)\n"
	"  --reboot    reset the machine when done\n"
	"  --debugcon  also print to I/O port 0xE9 (QEMU debugcon; off on hardware)\n"
	"  --no-run-dir  do not write a run directory to the ESP\n"
	"\n"
	"Arguments come from the UEFI Shell command line (at most 4095 characters).\n"
	"Booted without arguments (e.g. as \\EFI\\BOOT\\BOOTX64.EFI), efipt.efi reads\n"
	"them from the text file efipt.args in its own directory (ASCII, at most\n"
	"64 KiB, '#' starts a comment; if it cannot be used, its --shutdown/--reboot\n"
	"still are). Each run writes\n"
	"\\efipt\\<run-id>\\ on the volume it was loaded from (manifest.json,\n"
	"cpuid.txt, ...): decode it on a host with 'efipt info DIR'. The UEFI\n"
	"watchdog timer is off while efipt.efi runs, so a long run is not reset.\n";

/* Load options hold the shell's command line as UCS-2; boot entries may put
 * arbitrary bytes there, so only printable UCS-2 text is taken as arguments. */
enum load_options { OPTIONS_NONE, OPTIONS_TEXT, OPTIONS_TOO_LONG };

static enum load_options load_options_text(EFI_LOADED_IMAGE *img, char *out, UINTN cap)
{
	out[0] = 0;
	if (!img->LoadOptions || img->LoadOptionsSize < 2)
		return OPTIONS_NONE;
	const CHAR16 *w = img->LoadOptions;
	UINTN n = img->LoadOptionsSize / sizeof(CHAR16);
	UINTN o = 0;
	for (UINTN i = 0; i < n && w[i]; i++) {
		if (w[i] > 0x7e || (w[i] < 0x20 && w[i] != '\t'))
			return OPTIONS_NONE;
		if (o + 1 < cap)
			out[o] = (char)w[i];
		o++;
	}
	if (o + 1 > cap) {
		out[0] = 0;
		return OPTIONS_TOO_LONG;
	}
	out[o] = 0;
	return o > 0 ? OPTIONS_TEXT : OPTIONS_NONE;
}

struct globals {
	bool help, version, shutdown, reboot, no_run_dir;
};

/*
 * When no command line can be had (efipt.args too big, not text, or not
 * splittable), the rig still expects its --shutdown or --reboot: take those
 * (and --debugcon, so the reason is seen) from the raw bytes.
 */
static void salvage_globals(const char *raw, UINTN len, UINTN first, UINTN step,
			    struct globals *g)
{
	static const char *const words[] = { "--shutdown", "--reboot", "--debugcon" };
	unsigned found = cmdline_salvage(raw, len, first, step, words, 3);
	g->shutdown |= (found & 1) != 0;
	g->reboot |= (found & 2) != 0;
	if (found & 4)
		con_set_debugcon(true);
}

/* efipt.args may be annotated: comments do not count against the command
 * line, but a file beyond this is not a command line. */
#define ARGS_FILE_MAX (64u << 10)

/*
 * efipt.args beside the image: a text file, read into out as one line
 * without comments (*bom: a UTF-8 byte order mark was skipped).
 * EFI_NOT_FOUND if there is none. Any other failure is
 * explained in one line, after its --shutdown/--reboot/--debugcon are taken.
 */
static EFI_STATUS read_args_file(struct app *app, char *out, UINTN cap, struct globals *g,
				 bool *bom)
{
	CHAR16 path[320];
	UINTN n = 0;
	for (const CHAR16 *d = app->esp.image_dir; *d && n < 280; d++)
		path[n++] = *d;
	if (n && path[n - 1] != L'\\')
		path[n++] = L'\\';
	path[n] = 0;
	StrCat(path, L"efipt.args");
	char name[320];
	ucs2_to_ascii(name, sizeof(name), path);
	char *data;
	UINTN len;
	UINT64 size;
	EFI_STATUS st = esp_read_head(&app->esp, path, ARGS_FILE_MAX, &data, &len, &size);
	if (st == EFI_NOT_FOUND)
		return st;
	if (EFI_ERROR(st)) {
		con_printf("efipt: %s: cannot read it: %s\n", name, efi_status_name(st));
		return st;
	}
	const unsigned char *u = (const unsigned char *)data;
	UINTN skip = 0;
	if (len >= 3 && u[0] == 0xef && u[1] == 0xbb && u[2] == 0xbf)
		skip = 3; /* a UTF-8 byte order mark: the rest is still text */
	bool utf16 = len >= 2 && ((u[0] == 0xff && u[1] == 0xfe) || (u[0] == 0xfe && u[1] == 0xff));
	UINTN ctl = skip;
	while (ctl < len && (u[ctl] >= 0x20 || u[ctl] == '\t' || u[ctl] == '\n' || u[ctl] == '\r') &&
	       u[ctl] != 0x7f)
		ctl++;
	size_t bad = 0;
	int r = 0;
	st = EFI_INVALID_PARAMETER;
	if (size > ARGS_FILE_MAX) {
		salvage_globals(data, len, 0, 1, g);
		st = EFI_BAD_BUFFER_SIZE;
		con_printf("efipt: %s is %llu bytes (at most %u): not used\n", name,
			   (unsigned long long)size, ARGS_FILE_MAX);
	} else if (utf16) {
		salvage_globals(data, len, u[0] == 0xff ? 2 : 3, 2, g);
		con_printf("efipt: %s is UTF-16 text (byte order mark %02X %02X): save it as ASCII "
			   "text; not used\n",
			   name, u[0], u[1]);
	} else if (ctl < len) {
		salvage_globals(data, len, skip, 1, g);
		con_printf("efipt: %s is not text (byte 0x%02x at offset %llu): not used\n", name,
			   u[ctl], (unsigned long long)ctl);
	} else if ((r = cmdline_uncomment(data + skip, len - skip, out, cap, &bad)) < 0) {
		salvage_globals(data, len, skip, 1, g);
		if (r == CMDLINE_NOT_ASCII)
			con_printf("efipt: %s: byte 0x%02x at offset %llu is not ASCII (only comments "
				   "may have other characters): not used\n",
				   name, u[skip + bad], (unsigned long long)(skip + bad));
		else
			con_printf("efipt: %s: the command line, without comments, is longer than %llu "
				   "bytes: not used\n",
				   name, (unsigned long long)(cap - 1));
	} else {
		st = EFI_SUCCESS;
		*bom = skip != 0;
	}
	FreePool(data);
	return st;
}

/* Take global options out of argv (up to a "--"); report the first unknown one. */
static EFI_STATUS parse_globals(struct app *app, int argc, char **argv, struct globals *g)
{
	int out = 0;
	bool after_dashdash = false;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (after_dashdash) {
			argv[out++] = argv[i];
			continue;
		}
		if (!efipt_strcmp(a, "--")) {
			after_dashdash = true;
			argv[out++] = argv[i];
		} else if (!efipt_strcmp(a, "--help") || !efipt_strcmp(a, "-h")) {
			g->help = true;
		} else if (!efipt_strcmp(a, "--version")) {
			g->version = true;
		} else if (!efipt_strcmp(a, "--shutdown")) {
			g->shutdown = true;
		} else if (!efipt_strcmp(a, "--reboot")) {
			g->reboot = true;
		} else if (!efipt_strcmp(a, "--debugcon")) {
			con_set_debugcon(true);
		} else if (!efipt_strcmp(a, "--no-run-dir")) {
			g->no_run_dir = true;
		} else {
			argv[out++] = argv[i];
		}
	}
	app->argc = out;
	argv[out] = 0;
	if (g->shutdown && g->reboot) {
		con_puts("efipt: --shutdown and --reboot exclude each other\n");
		return EFI_INVALID_PARAMETER;
	}
	return EFI_SUCCESS;
}

/*
 * A command checks its arguments first (parse), before anything is written,
 * so a bad command line changes nothing; then it runs with a run directory.
 */
struct command {
	const char *name;
	EFI_STATUS (*parse)(struct app *app);
	EFI_STATUS (*run)(struct app *app);
	void (*help)(void); /* the command's own --help, if it has options */
};

static const struct command commands[] = {
	{ "caps", efi_parse_caps, efi_cmd_caps, NULL },
	{ "trace", efi_parse_trace, efi_cmd_trace, efi_help_trace },
	{ "selftest", efi_parse_selftest, efi_cmd_selftest, NULL },
	{ "snapshot", efi_parse_snapshot, efi_cmd_snapshot, NULL },
	{ "collect", efi_parse_collect, efi_cmd_collect, efi_help_collect },
	{ "arm", efi_parse_arm, efi_cmd_arm, efi_help_arm },
	{ "recover", efi_parse_recover, efi_cmd_recover, efi_help_recover },
};

static const struct command *find_command(const char *name)
{
	for (unsigned i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!efipt_strcmp(name, commands[i].name))
			return &commands[i];
	return NULL;
}

/*
 * The boot manager arms a 5-minute watchdog before it starts a boot option
 * (UEFI 2.10, 7.5 SetWatchdogTimer), and so may a traced image. Writing a
 * large trace to a slow stick or decoding in place can take longer; a reset
 * would lose the whole run, so the timer is off while efipt.efi runs.
 */
EFI_STATUS app_watchdog_off(void)
{
	return uefi_call_wrapper(BS->SetWatchdogTimer, 4, 0, 0, 0, NULL);
}

static void finish(const struct globals *g, EFI_STATUS st)
{
	con_printf("efipt: exit %s\n", efi_status_name(st));
	if (g->shutdown || g->reboot) {
		con_printf("efipt: %s\n", g->shutdown ? "powering off" : "resetting");
		uefi_call_wrapper(RT->ResetSystem, 4, g->shutdown ? EfiResetShutdown : EfiResetCold,
				  st, 0, NULL);
	}
}

static EFI_STATUS run_app(struct app *app, struct globals *g)
{
	EFI_GUID lip = LOADED_IMAGE_PROTOCOL;
	EFI_STATUS st = uefi_call_wrapper(BS->HandleProtocol, 3, app->image_handle, &lip,
					  (void **)&app->image);
	if (EFI_ERROR(st)) {
		con_printf("efipt: cannot get the loaded image protocol: %s\n", efi_status_name(st));
		return st;
	}
	EFI_STATUS esp_st = esp_open(&app->esp, app->image);

	char *text = app->cmdline;
	app->args_source = "none";
	enum load_options lo = load_options_text(app->image, text, sizeof(app->cmdline));
	if (lo == OPTIONS_TOO_LONG) {
		/* the rig still expects its --shutdown or --reboot */
		salvage_globals(app->image->LoadOptions, app->image->LoadOptionsSize, 0, 2, g);
		con_printf("efipt: the command line is longer than the %u characters efipt.efi "
			   "takes; put long argument lists in efipt.args\n",
			   (unsigned)sizeof(app->cmdline) - 1);
		return EFI_INVALID_PARAMETER;
	}
	if (lo == OPTIONS_TEXT) {
		app->args_source = "load options";
	} else if (!EFI_ERROR(esp_st)) {
		bool bom = false;
		st = read_args_file(app, text, sizeof(app->cmdline), g, &bom);
		if (!EFI_ERROR(st))
			app->args_source = bom ? "efipt.args, UTF-8 byte order mark skipped"
					       : "efipt.args";
		else if (st != EFI_NOT_FOUND)
			return st;
	}
	/* trim trailing blanks (a shell line may end in some) */
	for (UINTN n = efipt_strlen(text); n && (text[n - 1] == '\n' || text[n - 1] == ' ' ||
						 text[n - 1] == '\r' || text[n - 1] == '\t');)
		text[--n] = 0;
	char *split = app->cmdline_words;
	efipt_memcpy(split, text, sizeof(app->cmdline_words));
	int argc = cmdline_split(split, app->argv, APP_MAX_ARGS);
	if (argc < 0) {
		salvage_globals(text, efipt_strlen(text), 0, 1, g);
		con_printf("efipt: bad command line (%s): %s\n", app->args_source,
			   argc == CMDLINE_TOO_MANY ? "more than 64 arguments" : "unclosed quote");
		return EFI_INVALID_PARAMETER;
	}
	char **argv = app->argv;
	/* the shell passes the image's own name first */
	if (argc && cmdline_is_image_name(argv[0])) {
		argv++;
		argc--;
	}
	st = parse_globals(app, argc, argv, g);
	if (app->argv != argv) /* keep app->argv[0] as the command name */
		for (int i = 0; i <= app->argc; i++)
			app->argv[i] = argv[i];
	if (EFI_ERROR(st))
		return st;

	if (g->help) {
		const struct command *c = app->argc ? find_command(app->argv[0]) : NULL;
		if (c && c->help)
			c->help();
		else
			con_puts(usage_text);
		return EFI_SUCCESS;
	}
	if (g->version) {
		con_printf("efipt.efi %s (%s)\n", efipt_version, efipt_gitrev);
		return EFI_SUCCESS;
	}
	static char *default_argv[] = { "caps", 0 };
	if (app->argc == 0) {
		app->argc = 1;
		app->argv[0] = default_argv[0];
		app->argv[1] = 0;
	}
	const char *name = app->argv[0];
	const struct command *cmd = find_command(name);
	if (!cmd) {
		if (name[0] == '-')
			con_printf("efipt: unknown option '%s' (see efipt.efi --help)\n", name);
		else
			con_printf("efipt: unknown command '%s' (see efipt.efi --help)\n", name);
		return EFI_INVALID_PARAMETER;
	}
	st = cmd->parse(app);
	if (EFI_ERROR(st))
		return st;
	con_printf("efipt.efi %s: %s (arguments from %s)\n", efipt_version, name,
		   app->args_source);
	if (cmd->run != efi_cmd_collect)
		collect_notice();
	if (EFI_ERROR(app->watchdog_st))
		con_printf("efipt: cannot turn the UEFI watchdog timer off (%s): a run longer "
			   "than the firmware's limit may be reset\n",
			   efi_status_name(app->watchdog_st));
	else
		con_puts("efipt: UEFI watchdog timer off for this run\n");
	recorder_check_at_start(); /* a flight recorder trace from the last boot? */

	if (!g->no_run_dir) {
		if (EFI_ERROR(esp_st)) {
			con_printf("efipt: cannot open the volume efipt.efi was loaded from (%s): "
				   "no run directory will be written\n",
				   efi_status_name(esp_st));
		} else {
			EFI_STATUS rs = run_create(&app->run, &app->esp, name, app->cmdline);
			if (EFI_ERROR(rs))
				con_printf("efipt: cannot create a run directory under \\efipt: %s\n",
					   efi_status_name(rs));
			else
				app->have_run = true;
		}
	}
	st = cmd->run(app);
	if (app->have_run) {
		EFI_STATUS ms = run_write_manifest(&app->run);
		if (EFI_ERROR(ms))
			con_printf("efipt: writing the manifest failed: %s\n", efi_status_name(ms));
		else
			con_printf("efipt: run directory \\efipt\\%s written\n", app->run.id);
	}
	return st;
}

EFI_STATUS efi_main(EFI_HANDLE image_handle, EFI_SYSTEM_TABLE *systab);
EFI_STATUS efi_main(EFI_HANDLE image_handle, EFI_SYSTEM_TABLE *systab)
{
	InitializeLib(image_handle, systab);
	struct app *app = &the_app;
	efipt_memset(app, 0, sizeof(*app));
	app->image_handle = image_handle;
	app->watchdog_st = app_watchdog_off();
	struct globals g = { 0 };
	EFI_STATUS st = run_app(app, &g);
	esp_close(&app->esp);
	finish(&g, st);
	return st;
}
