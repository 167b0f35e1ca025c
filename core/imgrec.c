/* Image records and their images.json text; see imgrec.h. */
#include "core/imgrec.h"
#include "core/pe_info.h"

_Static_assert(sizeof(struct imgrec) == 616, "imgrec is part of the recorder format");

const char *uefi_memtype_name(uint32_t t)
{
	static const char *const names[] = {
		"Reserved", "LoaderCode", "LoaderData", "BootServicesCode", "BootServicesData",
		"RuntimeServicesCode", "RuntimeServicesData", "Conventional", "Unusable",
		"ACPIReclaim", "ACPINVS", "MMIO", "MMIOPortSpace", "PalCode", "Persistent",
		"Unaccepted",
	};
	return t < sizeof(names) / sizeof(names[0]) ? names[t] : "Other";
}

void imgrec_json(const struct imgrec *r, struct strbuf *sb)
{
	sb_puts(sb, "{\"name\": \"");
	sb_json_escape(sb, r->name);
	sb_printf(sb, "\", \"base\": \"0x%llx\", \"size\": %llu, ", (unsigned long long)r->base,
		  (unsigned long long)r->size);
	if (r->bad_size)
		sb_printf(sb, "\"bad_image_size\": \"0x%llx\", ", (unsigned long long)r->bad_size);
	sb_printf(sb, "\"code_type\": \"%s\", \"path\": \"", uefi_memtype_name(r->code_type));
	sb_json_escape(sb, r->path);
	sb_puts(sb, "\", \"pdb\": \"");
	sb_json_escape(sb, r->pdb);
	sb_putc(sb, '"');
	if (r->pe_err == PE_OK)
		sb_printf(sb, ", \"entry\": \"0x%llx\"", (unsigned long long)r->entry);
	else
		sb_printf(sb, ", \"pe_error\": \"%s\"", pe_errstr(r->pe_err));
	sb_putc(sb, '}');
}

void imgrec_clean_text(char *s, unsigned cap)
{
	unsigned i = 0;
	for (; i < cap && s[i]; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			s[i] = '?';
	if (i == cap)
		s[cap - 1] = 0;
}

void imgrec_sanitize(struct imgrec *r)
{
	imgrec_clean_text(r->name, sizeof(r->name));
	imgrec_clean_text(r->path, sizeof(r->path));
	imgrec_clean_text(r->pdb, sizeof(r->pdb));
}
