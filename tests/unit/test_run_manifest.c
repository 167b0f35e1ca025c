/*
 * core/run_manifest: the manifest.json text efipt.efi and the QEMU plugin
 * share. Its output must be JSON a strict parser (jansson validates UTF-8)
 * reads back to the same values, whatever bytes the names hold.
 */
#include <jansson.h>
#include <string.h>

#include "check.h"
#include "core/run_manifest.h"
#include "core/version.h"

/* bytes a command line or a name may hold: quotes, controls, DEL, UTF-8
 * and what is not UTF-8 (a lone continuation byte, 0xff, an overlong '/',
 * a surrogate, a cut sequence at the end) */
static const char evil[] = "a\"b\\c\nd\r\te\x1b[2J\x7f \xc3\xa9 \xf0\x9f\x98\x80 \x80\xff"
			   "\xc0\xaf\xed\xa0\x80\xe2\x82";
/* ... as jansson reads them back: invalid bytes as the text \xNN */
static const char evil_read[] = "a\"b\\c\nd\r\te\x1b[2J\x7f \xc3\xa9 \xf0\x9f\x98\x80 "
				"\\x80\\xff\\xc0\\xaf\\xed\\xa0\\x80\\xe2\\x82";

static json_t *parse(const char *buf, size_t len, const char *name)
{
	json_error_t e;
	json_t *j = json_loadb(buf, len, 0, &e);
	CHECKF(j != NULL, name, "line %d col %d: %s\n%s", e.line, e.column, e.text, buf);
	return j;
}

static const char *str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "(missing)";
}

static void check_full(void)
{
	static char buf[8192];
	struct strbuf sb;
	sb_init(&sb, buf, sizeof(buf));
	struct runmf_head h = { "20261126-092200-000", "2026-11-26T09:22:00", "trace", evil };
	runmf_open(&sb, &h);
	sb_puts(&sb, "  \"trace\": {\"bytes\": 7},\n"); /* a producer's own member */
	runmf_files_open(&sb);
	runmf_file(&sb, 0, "trace.pt", 7, "written");
	runmf_file(&sb, 1, evil, 0, "EFI_VOLUME_FULL");
	runmf_close(&sb, 2, "failed", "EFI_VOLUME_FULL", evil);
	CHECK(!sb.truncated, "run_manifest: fits");
	json_t *j = parse(buf, sb.len, "run_manifest: valid JSON (escapes, invalid UTF-8)");
	if (!j)
		return;
	CHECK(!strcmp(str(j, "format"), "efipt-run") &&
		      json_integer_value(json_object_get(j, "format_version")) == 1 &&
		      !strcmp(str(j, "efipt_version"), efipt_version) &&
		      !strcmp(str(j, "efipt_gitrev"), efipt_gitrev) &&
		      !strcmp(str(j, "run_id"), "20261126-092200-000") &&
		      !strcmp(str(j, "started"), "2026-11-26T09:22:00") &&
		      !strcmp(str(j, "command"), "trace"),
	      "run_manifest: head members");
	CHECKF(!strcmp(str(j, "command_line"), evil_read), "run_manifest: command_line read back",
	       "'%s'", str(j, "command_line"));
	CHECK(json_integer_value(json_object_get(json_object_get(j, "trace"), "bytes")) == 7,
	      "run_manifest: the producer's member");
	json_t *files = json_object_get(j, "files");
	json_t *f1 = json_array_get(files, 1);
	CHECK(json_array_size(files) == 2 &&
		      !strcmp(str(json_array_get(files, 0), "name"), "trace.pt") &&
		      json_integer_value(json_object_get(json_array_get(files, 0), "size")) == 7 &&
		      !strcmp(str(json_array_get(files, 0), "status"), "written") &&
		      !strcmp(str(f1, "name"), evil_read) &&
		      !strcmp(str(f1, "status"), "EFI_VOLUME_FULL"),
	      "run_manifest: files");
	json_t *st = json_object_get(j, "status");
	CHECK(!strcmp(str(st, "result"), "failed") && !strcmp(str(st, "efi_status"), "EFI_VOLUME_FULL") &&
		      !strcmp(str(st, "message"), evil_read),
	      "run_manifest: status");
	json_decref(j);
}

static void check_empty(void)
{
	char buf[2048];
	struct strbuf sb;
	sb_init(&sb, buf, sizeof(buf));
	struct runmf_head h = { "r", "unknown", "qemu", NULL };
	runmf_open(&sb, &h);
	runmf_files_open(&sb);
	runmf_close(&sb, 0, "ok", "none", NULL);
	json_t *j = parse(buf, sb.len, "run_manifest: no files, no command line: valid JSON");
	if (!j)
		return;
	CHECK(json_array_size(json_object_get(j, "files")) == 0 &&
		      !strcmp(str(j, "command_line"), "") &&
		      !strcmp(str(json_object_get(j, "status"), "message"), ""),
	      "run_manifest: empty files and strings");
	json_decref(j);

	/* too small a buffer: the caller sees truncated and writes nothing */
	char small[64];
	sb_init(&sb, small, sizeof(small));
	runmf_open(&sb, &h);
	CHECK(sb.truncated, "run_manifest: truncation is reported");
}

int main(void)
{
	check_full();
	check_empty();
	return check_failures ? 1 : 0;
}
