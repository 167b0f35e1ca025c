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
#include "host/input/trace_input.h"

static void symbols_usage(FILE *f)
{
	fprintf(f,
		"usage: efipt symbols RUNDIR [--symbols PATH]... [--path-map OLD=NEW]...\n"
		"       efipt symbols --pe FILE[:BASE]... [--images FILE] [--symbols PATH]...\n\n"
		"For every traced image: the symbol file used (an ELF with DWARF or\n"
		".symtab, else a GNU ld .map), how it was found (codeview path, base name,\n"
		"gnu_debuglink, FvFile GUID through FV/Guid.xref, the image file itself for\n"
		"--elf, or a map file), the check that its code equals the image's, and\n"
		"what is missing. A file whose code differs is never used:\n"
		"the image's code is then IMAGE`[unknown] (efipt calls: IMAGE+0xRVA).\n"
		"PDB files (MSVC/CLANGPDB builds) are not supported.\n\n"
		TRACE_INPUT_USAGE
		"  --lookup ADDR   also name the function and source line at ADDR\n"
		"                  (repeatable)\n"
		"\nExit status: 0 listed (with or without symbols), 2 on usage errors or\n"
		"unreadable inputs.\n");
}

/* ADDR image`function+0xOFF [file:line] */
static void print_lookup(struct trace_input *t, const char *arg)
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
		const struct symimage *m = &t->st.img[im];
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
	static const struct option opts[] = {
		TRACE_INPUT_OPTS,
		{ "lookup", required_argument, 0, 'L' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	struct trace_input t;
	const char *lookup[64];
	size_t nlookup = 0;
	int c, rc = 2;
	trace_input_init(&t, "symbols");
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'h') {
			symbols_usage(stdout);
			rc = 0;
			goto out;
		}
		if (c == 'L') {
			unsigned long long a;
			if (parse_u64(optarg, &a) || nlookup == 64) {
				fprintf(stderr, "efipt symbols: --lookup takes an address (at most 64), "
					"not '%s'\n", optarg);
				goto out;
			}
			lookup[nlookup++] = optarg;
			continue;
		}
		if (c == '?' || trace_input_option(&t, c, optarg)) {
			if (c == '?')
				symbols_usage(stderr);
			goto out;
		}
	}
	if (optind + 1 < argc) {
		symbols_usage(stderr);
		goto out;
	}
	if (trace_input_finish(&t, optind < argc ? argv[optind] : NULL, false))
		goto out;
	size_t with = 0;
	for (size_t i = 0; i < t.nimg; i++) {
		const struct symimage *m = &t.img[i];
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
	printf("%zu of %zu images with symbols\n", with, t.nimg);
	for (size_t i = 0; i < nlookup; i++)
		print_lookup(&t, lookup[i]);
	rc = 0;
out:
	trace_input_free(&t);
	return rc; /* main's finish_stdout() checks the writes */
}
