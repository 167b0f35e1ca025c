/* manifest.json's common members; see run_manifest.h. */
#include "core/run_manifest.h"
#include "core/version.h"

/* "  \"key\": \"value\"" and the separator after it */
static void member(struct strbuf *sb, const char *key, const char *value, const char *sep)
{
	sb_printf(sb, "  \"%s\": ", key);
	sb_json_str(sb, value ? value : "");
	sb_puts(sb, sep);
}

void runmf_open(struct strbuf *sb, const struct runmf_head *h)
{
	sb_puts(sb, "{\n  \"format\": \"efipt-run\",\n  \"format_version\": 1,\n");
	member(sb, "efipt_version", efipt_version, ",\n");
	member(sb, "efipt_gitrev", efipt_gitrev, ",\n");
	member(sb, "run_id", h->run_id, ",\n");
	member(sb, "started", h->started, ",\n");
	member(sb, "command", h->command, ",\n");
	member(sb, "command_line", h->command_line, ",\n");
}

void runmf_files_open(struct strbuf *sb)
{
	sb_puts(sb, "  \"files\": [");
}

void runmf_file(struct strbuf *sb, unsigned index, const char *name, uint64_t size,
		const char *status)
{
	sb_puts(sb, index ? ",\n    {\"name\": " : "\n    {\"name\": ");
	sb_json_str(sb, name);
	sb_printf(sb, ", \"size\": %llu, \"status\": ", (unsigned long long)size);
	sb_json_str(sb, status);
	sb_putc(sb, '}');
}

void runmf_close(struct strbuf *sb, unsigned nfiles, const char *result,
		 const char *efi_status, const char *message)
{
	sb_puts(sb, nfiles ? "\n  ],\n" : "],\n");
	sb_puts(sb, "  \"status\": {\"result\": ");
	sb_json_str(sb, result);
	sb_puts(sb, ", \"efi_status\": ");
	sb_json_str(sb, efi_status);
	sb_puts(sb, ", \"message\": ");
	sb_json_str(sb, message ? message : "");
	sb_puts(sb, "}\n}\n");
}
