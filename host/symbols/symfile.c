/*
 * ELF symbol files through libelf/libdw (elfutils): see symfile.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>

#include "host/symbols/symfile.h"

char *symfile_own_len(struct symfile *sf, const char *s, size_t len)
{
	if (sf->nowned == sf->owned_cap) {
		size_t cap = sf->owned_cap ? sf->owned_cap * 2 : 256;
		char **o = realloc(sf->owned, cap * sizeof(*o));
		if (!o)
			return NULL;
		sf->owned = o;
		sf->owned_cap = cap;
	}
	char *d = strndup(s, len);
	if (d)
		sf->owned[sf->nowned++] = d;
	return d;
}

char *symfile_own(struct symfile *sf, const char *s)
{
	return symfile_own_len(sf, s, strlen(s));
}

static int add_func(struct symfile *sf, uint64_t lo, uint64_t hi, uint64_t entry,
		    const char *name, bool dw, int decl_line)
{
	if (hi <= lo)
		return 0;
	if (sf->nfuncs == sf->funcs_cap) {
		size_t cap = sf->funcs_cap ? sf->funcs_cap * 2 : 1024;
		struct symfunc *f = realloc(sf->funcs, cap * sizeof(*f));
		if (!f)
			return -1;
		sf->funcs = f;
		sf->funcs_cap = cap;
	}
	sf->funcs[sf->nfuncs++] = (struct symfunc){ lo, hi, entry, name, dw, decl_line };
	return 0;
}

static int add_reloc(struct symfile *sf, uint64_t at, uint8_t len)
{
	if (sf->nrelocs == sf->relocs_cap) {
		size_t cap = sf->relocs_cap ? sf->relocs_cap * 2 : 1024;
		struct symreloc *r = realloc(sf->relocs, cap * sizeof(*r));
		if (!r)
			return -1;
		sf->relocs = r;
		sf->relocs_cap = cap;
	}
	sf->relocs[sf->nrelocs++] = (struct symreloc){ at, len };
	return 0;
}

/* The bytes a relocation of that type rewrites (the psABIs' tables: x86-64
 * and i386), 0 for none; a type not listed: a word of the class. */
static uint8_t reloc_len(uint16_t machine, bool elf64, unsigned type)
{
	if (machine == EM_X86_64) {
		switch (type) {
		case R_X86_64_NONE:
			return 0;
		case R_X86_64_8:
		case R_X86_64_PC8:
			return 1;
		case R_X86_64_16:
		case R_X86_64_PC16:
			return 2;
		case R_X86_64_PC32:
		case R_X86_64_PLT32:
		case R_X86_64_GOTPCREL:
		case R_X86_64_32:
		case R_X86_64_32S:
		case R_X86_64_GOTPC32:
		case R_X86_64_GOTPCRELX:
		case R_X86_64_REX_GOTPCRELX:
			return 4;
		}
		return 8;
	}
	if (machine == EM_386) {
		switch (type) {
		case R_386_NONE:
			return 0;
		case R_386_8:
		case R_386_PC8:
			return 1;
		case R_386_16:
		case R_386_PC16:
			return 2;
		}
		return 4;
	}
	return elf64 ? 8 : 4;
}

/* The name a DIE has, through DW_AT_abstract_origin / DW_AT_specification
 * (a subprogram of an IPA clone or an out-of-line copy names its origin). */
static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	if (dwarf_attr_integrate(die, DW_AT_name, &a))
		return dwarf_formstring(&a);
	return NULL;
}

static int add_subprogram(struct symfile *sf, Dwarf_Die *die)
{
	const char *n = die_name(die);
	if (!n)
		return 0;
	Dwarf_Addr entry = 0, base, lo, hi;
	bool have_entry = dwarf_entrypc(die, &entry) == 0;
	int decl_line = 0;
	if (dwarf_decl_line(die, &decl_line) || decl_line < 0)
		decl_line = 0;
	char *name = NULL;
	ptrdiff_t off = 0;
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (!have_entry) {
			entry = lo;
			have_entry = true;
		}
		if (!name && !(name = symfile_own(sf, n)))
			return -1;
		if (add_func(sf, lo, hi, entry, name, true, decl_line))
			return -1;
	}
	return 0;
}

/* Subprograms anywhere below die (C++ namespaces and classes nest them). */
static int walk_dies(struct symfile *sf, Dwarf_Die *parent, int depth)
{
	Dwarf_Die child;
	if (depth > 16 || dwarf_child(parent, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child);
		if (tag == DW_TAG_subprogram) {
			if (add_subprogram(sf, &child))
				return -1;
		} else if (tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
			   tag == DW_TAG_structure_type) {
			if (walk_dies(sf, &child, depth + 1))
				return -1;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

static int read_dwarf(struct symfile *sf)
{
	Dwarf *dw = sf->dwarf;
	Dwarf_Off off = 0, next;
	size_t hsize;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		if (dwarf_offdie(dw, off + hsize, &cu) && walk_dies(sf, &cu, 0))
			return -1;
		off = next;
	}
	return 0;
}

static int by_lo(const void *a, const void *b)
{
	const struct symfunc *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	/* DWARF first, then the longer range */
	if (x->from_dwarf != y->from_dwarf)
		return x->from_dwarf ? -1 : 1;
	return x->hi > y->hi ? -1 : x->hi < y->hi;
}

static int by_site(const void *a, const void *b)
{
	uint64_t x = ((const struct symreloc *)a)->at, y = ((const struct symreloc *)b)->at;
	return x < y ? -1 : x > y;
}

/* Is addr inside one of the sorted DWARF ranges dw[0..n)? */
static bool in_ranges(const struct symfunc *dw, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (dw[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < dw[lo - 1].hi;
}

/* FUNC symbols of one symbol table for code that DWARF does not cover. */
static int read_symtab(struct symfile *sf, Elf_Scn *scn, GElf_Shdr *sh, size_t ndwarf)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	if (!d || !sh->sh_entsize)
		return 0;
	size_t n = sh->sh_size / sh->sh_entsize;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym s;
		if (!gelf_getsym(d, (int)i, &s))
			break;
		if (GELF_ST_TYPE(s.st_info) != STT_FUNC || s.st_shndx == SHN_UNDEF ||
		    !s.st_size || s.st_value + s.st_size < s.st_value)
			continue;
		const char *nm = elf_strptr(sf->elf, sh->sh_link, s.st_name);
		if (!nm || !*nm)
			continue;
		sf->has_symtab = true;
		if (in_ranges(sf->funcs, ndwarf, s.st_value))
			continue;
		char *name = symfile_own(sf, nm);
		if (!name || add_func(sf, s.st_value, s.st_value + s.st_size, s.st_value, name, false, 0))
			return -1;
	}
	return 0;
}

/* The fields a relocation section rewrites in the loaded image. Those of
 * a section not loaded (.rela.debug_info of a link with --emit-relocs)
 * are offsets in that section, not addresses: skipped. sh_info 0: dynamic
 * relocations, at virtual addresses. */
static int read_relocs(struct symfile *sf, Elf *elf, Elf_Scn *scn, GElf_Shdr *sh)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	if (!d || !sh->sh_entsize)
		return 0;
	if (sh->sh_info) {
		GElf_Shdr to;
		Elf_Scn *t = elf_getscn(elf, sh->sh_info);
		if (!t || !gelf_getshdr(t, &to) || !(to.sh_flags & SHF_ALLOC))
			return 0;
	}
	bool elf64 = gelf_getclass(elf) == ELFCLASS64;
	size_t n = sh->sh_size / sh->sh_entsize;
	for (size_t i = 0; i < n; i++) {
		uint64_t at, info;
		if (sh->sh_type == SHT_RELA) {
			GElf_Rela r;
			if (!gelf_getrela(d, (int)i, &r))
				break;
			at = r.r_offset;
			info = r.r_info;
		} else {
			GElf_Rel r;
			if (!gelf_getrel(d, (int)i, &r))
				break;
			at = r.r_offset;
			info = r.r_info;
		}
		unsigned type = elf64 ? (unsigned)GELF_R_TYPE(info) : (unsigned)ELF32_R_TYPE(info);
		uint8_t len = reloc_len(sf->machine, elf64, type);
		if (len && add_reloc(sf, at, len))
			return -1;
	}
	return 0;
}

static int fail(char *err, size_t errlen, const char *path, const char *why)
{
	snprintf(err, errlen, "%s: %s", path, why);
	return -1;
}

/* Why a file is no symbol file: what it is instead (static buffer). */
static const char *not_elf(int fd, Elf *elf)
{
	static char why[300];
	unsigned char h[32] = { 0 };
	ssize_t n = pread(fd, h, sizeof(h), 0);
	int e = elf_errno();
	if (elf && elf_kind(elf) == ELF_K_AR)
		return "an ar archive, not an ELF file";
	if (n >= 2 && h[0] == 'M' && h[1] == 'Z')
		return "a PE image, not its symbols: give the ELF file the build made beside it "
		       "(NAME.debug, NAME.so) or its NAME.map";
	if (n >= 28 && !memcmp(h, "Microsoft C/C++ MSF 7.00", 24))
		return "a PDB file: not supported (MSVC/CLANGPDB builds; GCC builds have NAME.debug)";
	if (n >= 4 && !memcmp(h, "\177ELF", 4))
		snprintf(why, sizeof(why), "a damaged ELF file (%s)",
			 e ? elf_errmsg(e) : "its header cannot be read");
	else if (n <= 0)
		snprintf(why, sizeof(why), "an empty file, not an ELF file");
	else
		snprintf(why, sizeof(why), "not an ELF file (it starts with %02x %02x %02x %02x)",
			 h[0], h[1], h[2], h[3]);
	return why;
}

int symfile_open(struct symfile *sf, const char *path, char *err, size_t errlen)
{
	memset(sf, 0, sizeof(*sf));
	sf->fd = -1;
	snprintf(sf->path, sizeof(sf->path), "%s", path);
	elf_version(EV_CURRENT);
	sf->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (sf->fd < 0)
		return fail(err, errlen, path, strerror(errno));
	struct stat st;
	if (fstat(sf->fd, &st) || !S_ISREG(st.st_mode)) {
		/* a FIFO or a device would be read forever or block */
		close(sf->fd);
		sf->fd = -1;
		return fail(err, errlen, path, "not a regular file");
	}
	Elf *elf = elf_begin(sf->fd, ELF_C_READ_MMAP, NULL);
	sf->elf = elf;
	GElf_Ehdr eh;
	size_t shstr;
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		fail(err, errlen, path, not_elf(sf->fd, elf));
		goto bad;
	}
	sf->machine = eh.e_machine;
	if (elf_getshdrstrndx(elf, &shstr)) {
		fail(err, errlen, path, "truncated or damaged ELF section headers");
		goto bad;
	}
	sf->dwarf = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (sf->dwarf) {
		sf->has_dwarf = true;
		if (read_dwarf(sf) || symfile_read_inline(sf))
			goto oom;
	}
	size_t ndwarf = sf->nfuncs;
	if (ndwarf)
		qsort(sf->funcs, ndwarf, sizeof(*sf->funcs), by_lo);
	/* .symtab, else .dynsym */
	Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
	GElf_Shdr sh, symsh, dynsh;
	size_t nsec = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		nsec++;
		const char *nm = elf_strptr(elf, shstr, sh.sh_name);
		if (sh.sh_type == SHT_SYMTAB) {
			symtab = scn;
			symsh = sh;
		} else if (sh.sh_type == SHT_DYNSYM) {
			dynsym = scn;
			dynsh = sh;
		} else if (sh.sh_type == SHT_RELA || sh.sh_type == SHT_REL) {
			if (eh.e_type != ET_REL && read_relocs(sf, elf, scn, &sh))
				goto oom;
		} else if (nm && !strcmp(nm, ".gnu_debuglink")) {
			Elf_Data *d = elf_getdata(scn, NULL);
			if (d && d->d_buf && d->d_size)
				snprintf(sf->debuglink, sizeof(sf->debuglink), "%.*s",
					 (int)strnlen(d->d_buf, d->d_size), (const char *)d->d_buf);
		}
		if ((sh.sh_flags & SHF_EXECINSTR) && (sh.sh_flags & SHF_ALLOC) && sh.sh_size) {
			struct symcode *c = realloc(sf->code, (sf->ncode + 1) * sizeof(*c));
			if (!c)
				goto oom;
			sf->code = c;
			c = &sf->code[sf->ncode++];
			memset(c, 0, sizeof(*c));
			c->addr = sh.sh_addr;
			c->size = sh.sh_size;
			snprintf(c->name, sizeof(c->name), "%s", nm ? nm : "?");
			if (sh.sh_type != SHT_NOBITS) {
				Elf_Data *d = elf_getdata(scn, NULL);
				if (d && d->d_buf && d->d_size == sh.sh_size)
					c->bytes = d->d_buf;
			}
		}
	}
	if (!nsec && eh.e_shnum) {
		fail(err, errlen, path, "truncated ELF file (no readable section)");
		goto bad;
	}
	if (symtab ? read_symtab(sf, symtab, &symsh, ndwarf)
		   : dynsym ? read_symtab(sf, dynsym, &dynsh, ndwarf) : 0)
		goto oom;
	if (sf->nfuncs)
		qsort(sf->funcs, sf->nfuncs, sizeof(*sf->funcs), by_lo);
	/* no overlaps: a range ends where the next begins; duplicates go */
	size_t w = 0;
	for (size_t i = 0; i < sf->nfuncs; i++) {
		if (w && sf->funcs[i].lo < sf->funcs[w - 1].hi) {
			if (sf->funcs[i].lo == sf->funcs[w - 1].lo)
				continue;
			sf->funcs[w - 1].hi = sf->funcs[i].lo;
		}
		sf->funcs[w++] = sf->funcs[i];
	}
	sf->nfuncs = w;
	if (sf->nrelocs)
		qsort(sf->relocs, sf->nrelocs, sizeof(*sf->relocs), by_site);
	return 0;
oom:
	fail(err, errlen, path, "out of memory");
bad:
	symfile_close(sf);
	sf->fd = -1;
	return -1;
}

void symfile_close(struct symfile *sf)
{
	if (sf->dwarf)
		dwarf_end(sf->dwarf);
	if (sf->elf)
		elf_end(sf->elf);
	if (sf->fd >= 0)
		close(sf->fd);
	for (size_t i = 0; i < sf->nowned; i++)
		free(sf->owned[i]);
	free(sf->owned);
	symfile_free_inline(sf);
	free(sf->funcs);
	free(sf->code);
	free(sf->relocs);
	char path[sizeof(sf->path)];
	memcpy(path, sf->path, sizeof(path));
	memset(sf, 0, sizeof(*sf));
	memcpy(sf->path, path, sizeof(path));
	sf->fd = -1;
}

size_t symfile_funcs_upto(const struct symfile *sf, uint64_t addr)
{
	size_t lo = 0, hi = sf->nfuncs;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (sf->funcs[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct symfunc *symfile_func(const struct symfile *sf, uint64_t addr)
{
	size_t lo = symfile_funcs_upto(sf, addr);
	if (lo && addr < sf->funcs[lo - 1].hi)
		return &sf->funcs[lo - 1];
	return NULL;
}

int symfile_line(const struct symfile *sf, uint64_t addr, const char **file, int *line)
{
	Dwarf_Die cu;
	if (!sf->dwarf || !dwarf_addrdie(sf->dwarf, addr, &cu))
		return -1;
	Dwarf_Line *l = dwarf_getsrc_die(&cu, addr);
	if (!l)
		return -1;
	const char *f = dwarf_linesrc(l, NULL, NULL);
	if (!f || dwarf_lineno(l, line))
		return -1;
	*file = f;
	return 0;
}

bool symfile_reloc_at(const struct symfile *sf, uint64_t addr)
{
	/* the sites at or below addr, back to 8 bytes (the longest field)
	 * below it: one of them may reach it */
	size_t lo = 0, hi = sf->nrelocs;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (sf->relocs[mid].at <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo && addr - sf->relocs[lo - 1].at < 8; lo--)
		if (addr - sf->relocs[lo - 1].at < sf->relocs[lo - 1].len)
			return true;
	return false;
}
