/*
 * One symbol file: an ELF (EDK2 NAME.debug/NAME.dll, gnu-efi NAME.so, any
 * ELF with .symtab) read through libelf and libdw. Function ranges come from
 * DWARF subprograms where there is DWARF (their names, not the ELF names LTO
 * and GCC's IPA clones get: foo.lto_priv.0, foo.part.0, foo.constprop.0),
 * from .symtab FUNC symbols for code DWARF does not describe (assembly), and
 * from .symtab alone without DWARF. Line tables come from DWARF.
 *
 * Addresses are the ELF's virtual addresses: for gnu-efi and EDK2 GCC builds
 * they equal the PE image's RVAs (symmap.c checks that per section, against
 * the image's code).
 *
 * Symbol files are untrusted input: libelf/libdw check offsets, and a file
 * they reject is reported, never half-used.
 */
#ifndef EFIPT_HOST_SYMFILE_H
#define EFIPT_HOST_SYMFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One address range of a function: [lo, hi). A function with several
 * ranges (a hot and a .cold part) has one entry each, with the same name. */
struct symfunc {
	uint64_t lo, hi;
	uint64_t entry;		/* the function's entry address */
	const char *name;	/* owned by the symfile */
	bool from_dwarf;
	int decl_line;		/* DWARF's DW_AT_decl_line, 0: not known */
};

/* One DW_TAG_inlined_subroutine: a function inlined into another. */
struct syminline {
	const char *name;	/* of its abstract origin; owned by the symfile */
	uint32_t parent;	/* index + 1 of the inlined subroutine it lies
				 * in, 0: directly in the concrete function */
	uint32_t depth;		/* 1: directly in the concrete function */
	/* where the function is declared and where this copy begins: what
	 * lcov's FN record of a function that only ever runs inlined needs */
	uint64_t entry;		/* DW_AT_entry_pc, else its lowest address */
	const char *decl_file;	/* as its CU names it, or NULL; owned */
	const char *comp_dir;	/* its CU's DW_AT_comp_dir, or NULL; owned */
	int decl_line;		/* 0: not known */
};

/* [lo, hi) where the innermost inlined subroutine is inl[inl]. */
struct syminl_seg {
	uint64_t lo, hi;
	uint32_t inl;
};

/* A section with code (SHF_EXECINSTR), for checking it against an image. */
struct symcode {
	uint64_t addr, size;
	const uint8_t *bytes;	/* NULL: no bytes in the file (NOBITS) */
	char name[32];
};

/* A relocation field in the loaded image: the bytes [at, at + len) a
 * loader may rewrite. */
struct symreloc {
	uint64_t at;		/* virtual address */
	uint8_t len;
};

struct symfile {
	char path[4096];
	struct symfunc *funcs;	/* sorted by lo, not overlapping */
	size_t nfuncs;
	struct symcode *code;
	size_t ncode;
	struct symreloc *relocs;	/* sorted by at: the fields relocations of
					 * loaded sections (or dynamic ones) rewrite */
	size_t nrelocs;
	struct syminline *inl;	/* inlined subroutines (DWARF) */
	size_t ninl, inl_cap;
	struct syminl_seg *segs;	/* sorted, not overlapping */
	size_t nsegs;
	bool has_dwarf, has_symtab;
	bool from_map;		/* a GNU ld map (ldmap.h): functions only, no code */
	uint16_t machine;	/* e_machine */
	char debuglink[256];	/* .gnu_debuglink file name, or "" */
	/* private */
	int fd;
	void *elf;		/* Elf * */
	void *dwarf;		/* Dwarf * */
	char **owned;		/* strings the funcs point to */
	size_t nowned, owned_cap;
	size_t funcs_cap, relocs_cap;
};

/* Read path. Returns 0, or -1 with "PATH: reason" in err (not an ELF file,
 * truncated, unreadable). A file with neither DWARF nor function symbols
 * loads (its debuglink may lead further) with nfuncs == 0. */
int symfile_open(struct symfile *sf, const char *path, char *err, size_t errlen);
void symfile_close(struct symfile *sf);

/* How many functions start at or below addr (funcs is sorted by lo). */
size_t symfile_funcs_upto(const struct symfile *sf, uint64_t addr);
/* The function whose range holds addr, or NULL. */
const struct symfunc *symfile_func(const struct symfile *sf, uint64_t addr);

/* The innermost inlined subroutine at addr: its segment, or NULL and *next
 * the start of the next segment above addr (UINT64_MAX: none). */
const struct syminl_seg *symfile_inline(const struct symfile *sf, uint64_t addr,
					uint64_t *next);

/* Read the inlined subroutines of sf's DWARF (symfile_open() does):
 * host/symbols/syminline.c. 0, or -1 out of memory. */
int symfile_read_inline(struct symfile *sf);
void symfile_free_inline(struct symfile *sf);
/* A copy of s the symfile owns (freed by symfile_close()); NULL: no memory.
 * symfile_own_len copies at most len bytes of s. */
char *symfile_own(struct symfile *sf, const char *s);
char *symfile_own_len(struct symfile *sf, const char *s, size_t len);

/* Source file and line of addr from the DWARF line table: 0, or -1 when
 * there is none. *file points into the symfile. */
int symfile_line(const struct symfile *sf, uint64_t addr, const char **file, int *line);

/* Does a relocation's field cover the byte at addr? */
bool symfile_reloc_at(const struct symfile *sf, uint64_t addr);

#endif
