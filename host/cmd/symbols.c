/*
 * efipt symbols: for every traced image, the symbol file that names its
 * code, how it was found, how it was checked, and what is missing. The first
 * thing to run on a new trace with --symbols.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "host/cmd/commands.h"
#include "host/util/file_io.h"
#include "host/input/session.h"
#include "host/util/opts.h"

static const char symbols_usage[] =
	"usage: efipt symbols RUNDIR [--symbols PATH]... [--path-map OLD=NEW]...\n"
	"       efipt symbols --pe FILE[:BASE]... [--images FILE] [--symbols PATH]...\n\n"
	"For every traced image: the symbol file used (an ELF with DWARF or\n"
	".symtab, else a GNU ld .map), how it was found (codeview path, base name,\n"
	"gnu_debuglink, FvFile GUID through FV/Guid.xref, the image file itself for\n"
	"--elf, or a map file), the check that its code equals the image's, and\n"
	"what is missing. A file whose code differs is never used:\n"
	"the image's code is then IMAGE`[unknown] (efipt calls: IMAGE+0xRVA).\n"
	"PDB files (MSVC/CLANGPDB builds) are not supported.\n\n";

static const char symbols_tail[] =
	"Exit status: 0 listed (with or without symbols), 2 on usage errors or\n"
	"unreadable inputs.\n";

struct lookups {
	const char *a[64];
	size_t n;
};

static int set_lookup(void *ctx, const struct opt_row *r, const char *v, struct strbuf *err)
{
	struct lookups *l = ctx;
	unsigned long long a;
	if (parse_u64(v, &a) || l->n == 64) {
		sb_printf(err, "--%s takes an address (at most 64), not '%s'", r->name, term_safe(v));
		return -1;
	}
	l->a[l->n++] = v;
	return 0;
}

static const struct opt_row symbols_rows[] = {
	{ "lookup", OPT_VALUE, set_lookup, 0, "ADDR", "also name the function and source line "
	  "at ADDR\n(repeatable)" },
};

/* ADDR image`function+0xOFF [file:line] */
static void print_lookup(struct session *t, const char *arg)
{
	unsigned long long a;
	parse_u64(arg, &a);
	uint64_t hi;
	bool entry;
	uint32_t fn = symtab_lookup(&t->st, a, &hi, &entry);
	char name[700];
	symtab_fn_name(&t->st, fn, name, sizeof(name));
	int32_t im = fn < t->st.nfn ? t->st.fn[fn].image : -1;
	printf("0x%016llx %s", a, term_safe(name));
	if (im >= 0) {
		const struct image *m = &t->st.img[im];
		uint64_t rva = a - m->base;
		const struct symfunc *f = m->sf ? symfile_func(m->sf, rva) : NULL;
		const char *file;
		int line;
		if (f)
			printf("+0x%" PRIx64, rva - f->entry);
		else
			printf(" (%s+0x%" PRIx64 ")", term_safe(m->name), rva);
		if (m->sf && !symfile_line(m->sf, rva, &file, &line))
			printf(" %s:%d", term_safe(file), line);
	}
	putchar('\n');
}

int cmd_symbols(int argc, char **argv)
{
	struct session t;
	struct lookups lk = { { 0 }, 0 };
	int rc = 2;
	session_init(&t, "symbols");
	const struct session_cmd sc = { "symbols", symbols_usage, symbols_tail, true,
					NULL, symbols_rows,
					sizeof(symbols_rows) / sizeof(symbols_rows[0]), &lk };
	char *run;
	int pr = session_parse_args(&t, &sc, argc, argv, &run);
	if (pr != OPTS_OK) {
		rc = pr == OPTS_HELP ? 0 : 2;
		goto out;
	}
	if (session_open(&t, run, SESSION_SYMBOLS))
		goto out;
	size_t with = 0;
	for (unsigned i = 0; i < t.images.n; i++) {
		const struct image *m = &t.images.v[i];
		printf("%s  0x%016" PRIx64 "  %" PRIu64 " bytes\n", term_safe(m->name), m->base,
		       m->size);
		if (*m->pdb)
			printf("  recorded path: %s\n", term_safe(m->pdb));
		if (m->sf) {
			with++;
			printf("  symbols: %s\n  matched by: %s\n  functions: %zu (%s)\n",
			       term_safe(m->sf->path), symhow_name(m->how), m->sf->nfuncs,
			       m->sf->from_map    ? "GNU ld map, no lines"
			       : m->sf->has_dwarf ? "DWARF, lines"
						  : ".symtab only, no lines");
			if (m->sf->from_map)
				printf("  code: not verified (a map has no code); %s\n",
				       m->map_checked ? "its code sections lie in the image's"
						      : "sections not checked");
			else if (m->verified)
				printf("  code: equal to the image (%" PRIu64 " bytes; %" PRIu64
				       " more differ at relocation sites)%s\n",
				       m->compared, m->reloc_diffs,
				       m->executed_only ? "; only executed bytes known (QEMU's record)" : "");
			else
				printf("  code: not verified (no code of the image in the trace's "
				       "code images)\n");
		} else {
			printf("  symbols: none (its code counts as %s`[unknown])\n", term_safe(m->name));
		}
		if (*m->notes) {
			char buf[sizeof(m->notes)];
			snprintf(buf, sizeof(buf), "%s", m->notes);
			for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
				printf("  note: %s\n", term_safe(line));
		}
	}
	printf("%zu of %u images with symbols\n", with, t.images.n);
	for (size_t i = 0; i < lk.n; i++)
		print_lookup(&t, lk.a[i]);
	rc = 0;
out:
	session_free(&t);
	return rc; /* main's finish_stdout() checks the writes */
}
