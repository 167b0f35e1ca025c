/*
 * Matching traced images to symbol files: see symmap.h.
 */
#include <elf.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/pe_info.h"
#include "host/symbols/ldmap.h"
#include "host/symbols/symguid.h"
#include "host/symbols/symmap.h"

#define MAX_FOUND 200000

const char *symhow_name(int how)
{
	static const char *n[] = { "none", "codeview path", "base name", "gnu_debuglink",
				   "the image file itself", "FvFile GUID through Guid.xref",
				   "map file, not verified by code", "--symbols IMAGE=FILE" };
	return how >= 0 && how <= SYMHOW_GIVEN ? n[how] : "?";
}

int symopts_add_path(struct symopts *o, const char *path, char *err, size_t errlen)
{
	struct stat st;
	const char *eq = strchr(path, '=');
	if (eq && stat(path, &st)) { /* IMAGE=FILE (a path holding '=' exists) */
		const char *file = eq + 1;
		if (eq == path || !*file || memchr(path, '/', (size_t)(eq - path))) {
			snprintf(err, errlen, "--symbols %s: IMAGE=FILE wants an image name and a "
				 "symbol file", path);
			return -1;
		}
		if (stat(file, &st) || !S_ISREG(st.st_mode)) {
			snprintf(err, errlen, "--symbols %s: %s is not a file", path, file);
			return -1;
		}
		if (o->nbinds == sizeof(o->bind_img) / sizeof(o->bind_img[0])) {
			snprintf(err, errlen, "--symbols IMAGE=FILE: at most %zu", o->nbinds);
			return -1;
		}
		o->bind_img[o->nbinds] = strndup(path, (size_t)(eq - path));
		o->bind_file[o->nbinds] = file;
		if (!o->bind_img[o->nbinds]) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		o->nbinds++;
		return 0;
	}
	if (o->npaths == sizeof(o->paths) / sizeof(o->paths[0])) {
		snprintf(err, errlen, "--symbols: at most %zu paths", o->npaths);
		return -1;
	}
	if (stat(path, &st) || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
		snprintf(err, errlen, "--symbols %s: not a directory or a file", path);
		return -1;
	}
	o->paths[o->npaths++] = path;
	return 0;
}

int symopts_add_map(struct symopts *o, const char *spec, char *err, size_t errlen)
{
	const char *eq = strchr(spec, '=');
	if (!eq || eq == spec || !eq[1] ||
	    o->nmaps == sizeof(o->map_old) / sizeof(o->map_old[0])) {
		snprintf(err, errlen, "--path-map wants OLD=NEW (a path prefix and its "
			 "replacement, neither empty; at most %zu), got '%s'",
			 sizeof(o->map_old) / sizeof(o->map_old[0]), spec);
		return -1;
	}
	o->map_old[o->nmaps] = strndup(spec, (size_t)(eq - spec));
	o->map_new[o->nmaps] = eq + 1;
	if (!o->map_old[o->nmaps]) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	o->nmaps++;
	return 0;
}

void symopts_free(struct symopts *o)
{
	for (size_t i = 0; i < o->nmaps; i++)
		free((char *)o->map_old[i]);
	for (size_t i = 0; i < o->nbinds; i++)
		free((char *)o->bind_img[i]);
	for (size_t i = 0; i < o->nfound; i++)
		free(o->found[i]);
	free(o->found);
	memset(o, 0, sizeof(*o));
}

/* nftw has no context argument: the index being built */
static struct symopts *indexing;

static bool symbol_ext(const char *base)
{
	const char *dot = strrchr(base, '.');
	return dot && (!strcmp(dot, ".debug") || !strcmp(dot, ".so") || !strcmp(dot, ".dll") ||
		       !strcmp(dot, ".map") || !strcmp(base, "Guid.xref"));
}

static int index_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)st;
	if (type != FTW_F || !symbol_ext(path + f->base))
		return 0;
	struct symopts *o = indexing;
	if (o->nfound >= MAX_FOUND)
		return 1;
	if (!(o->nfound & (o->nfound + 1)) || !o->found) {
		char **n = realloc(o->found, (o->nfound * 2 + 2) * sizeof(*n));
		if (!n)
			return 1;
		o->found = n;
	}
	if ((o->found[o->nfound] = strdup(path)))
		o->nfound++;
	return 0;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every NAME.debug/.so/.dll/.map and Guid.xref under the --symbols
 * directories, once. */
static void build_index(struct symopts *o)
{
	if (o->indexed)
		return;
	o->indexed = true;
	indexing = o;
	for (size_t i = 0; i < o->npaths; i++) {
		struct stat st;
		if (!stat(o->paths[i], &st) && S_ISDIR(st.st_mode))
			nftw(o->paths[i], index_one, 32, FTW_PHYS);
	}
	indexing = NULL;
	/* the same answer whatever order the file system lists them in */
	if (o->nfound)
		qsort(o->found, o->nfound, sizeof(*o->found), by_path);
	/* a file under two --symbols paths (a directory and its parent) once */
	size_t u = 0;
	for (size_t i = 0; i < o->nfound; i++) {
		if (u && !strcmp(o->found[u - 1], o->found[i]))
			free(o->found[i]);
		else
			o->found[u++] = o->found[i];
	}
	o->nfound = u;
}

/* Add a line to the image's notes, once: a file found under two --symbols
 * paths is tried twice, but said once. */
static void note(struct image *im, const char *fmt, ...)
{
	char line[sizeof(im->notes)];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	size_t n = strlen(im->notes), k = strlen(line);
	for (const char *p = im->notes; (p = strstr(p, line)); p += k)
		if ((p == im->notes || p[-1] == '\n') && (p[k] == '\n' || !p[k]))
			return;
	if (n + 4 >= sizeof(im->notes))
		return;
	if (n)
		im->notes[n++] = '\n';
	snprintf(im->notes + n, sizeof(im->notes) - n, "%s", line);
}

/*
 * Is sf the image's? Every code section must lie inside the image and equal
 * the image's code at the same RVA, except at relocation sites (the image is
 * relocated to its load address; the ELF to its link address). 1 yes, 0 no
 * (noted why).
 */
static int check_code(struct image *im, struct symfile *sf, symmap_read read, void *ctx)
{
	uint64_t compared = 0, rdiff = 0, unknown = 0;
	bool any_bytes = false;
	if (sf->machine != EM_X86_64 && sf->machine != EM_386) {
		note(im, "%s: not x86 code (ELF machine %u)", sf->path, sf->machine);
		return 0;
	}
	if (!sf->nfuncs) {
		note(im, "%s: no functions (no DWARF, no .symtab: a stripped file)", sf->path);
		return 0;
	}
	for (size_t i = 0; i < sf->ncode; i++) {
		const struct symcode *c = &sf->code[i];
		if (im->size && (c->addr >= im->size || c->size > im->size - c->addr)) {
			note(im, "%s: section %s [0x%llx, 0x%llx) lies outside the image "
			     "(%llu bytes): a different build", sf->path, c->name,
			     (unsigned long long)c->addr, (unsigned long long)(c->addr + c->size),
			     (unsigned long long)im->size);
			im->code_rejects++;
			return 0;
		}
		if (!c->bytes)
			continue;
		any_bytes = true;
		uint8_t buf[4096];
		for (uint64_t off = 0; off < c->size;) {
			size_t want = c->size - off < sizeof(buf) ? (size_t)(c->size - off) : sizeof(buf);
			int got = read(ctx, im->base + c->addr + off, buf, want);
			if (got <= 0) {
				/* not in the snapshot: on to the next page */
				uint64_t skip = 4096 - ((im->base + c->addr + off) & 4095);
				off += skip < c->size - off ? skip : c->size - off;
				continue;
			}
			for (int k = 0; k < got; k++) {
				/* QEMU's record: a zero is a byte that never ran,
				 * unknown, whatever the file holds there */
				if (!buf[k] && im->executed_only) {
					unknown++;
					continue;
				}
				if (buf[k] == c->bytes[off + k])
					continue;
				if (symfile_reloc_at(sf, c->addr + off + k)) {
					rdiff++;
					continue;
				}
				note(im, "%s: code differs from the image at %s+0x%llx (RVA 0x%llx: "
				     "image %02x, file %02x): a different build%s", sf->path, c->name,
				     (unsigned long long)(off + k),
				     (unsigned long long)(c->addr + off + k), buf[k],
				     c->bytes[off + k],
				     buf[k] ? "" : " (or code a QEMU plugin recorded, whose unexecuted "
						   "bytes read as 00: give its run directory, whose "
						   "memmap.json says so, not --raw)");
				im->code_rejects++;
				return 0;
			}
			compared += (uint64_t)got;
			off += (uint64_t)got;
		}
	}
	if (!any_bytes) {
		note(im, "%s: holds no code to compare with the image (sections without "
		     "contents): give the unstripped ELF (NAME.debug, NAME.dll or NAME.so)", sf->path);
		return 0;
	}
	compared -= unknown;
	im->compared = compared - rdiff;
	im->reloc_diffs = rdiff;
	im->verified = compared > 0;
	if (!compared)
		note(im, "%s: not verified: none of the image's code is in the trace's code "
		     "images", sf->path);
	else if (im->executed_only && im->compared < SYMMAP_FEW_BYTES)
		note(im, "%s: the match rests on %llu known bytes of code (only executed bytes "
		     "are known): too few to tell builds apart for sure", sf->path,
		     (unsigned long long)im->compared);
	return 1;
}

static int try_file(struct image *im, struct symopts *o, const char *path, int how,
		    symmap_read read, void *ctx, int depth);

static void base_of(const char *path, char *stem, size_t cap)
{
	pe_debug_name(path, stem, cap);
}

/* A debuglink NAME: beside the file, then under --symbols. */
static int try_debuglink(struct image *im, struct symopts *o, const char *from,
			 const char *link, symmap_read read, void *ctx, int depth)
{
	char p[4200];
	const char *slash = strrchr(from, '/');
	int dl = slash ? (int)(slash - from) : 0;
	snprintf(p, sizeof(p), "%.*s%s%s", dl, from, slash ? "/" : "", link);
	if (strcmp(p, from) && !access(p, R_OK) &&
	    try_file(im, o, p, SYMHOW_DEBUGLINK, read, ctx, depth + 1))
		return 1;
	build_index(o);
	for (size_t i = 0; i < o->nfound; i++) {
		const char *b = strrchr(o->found[i], '/');
		b = b ? b + 1 : o->found[i];
		if (!strcmp(b, link) && strcmp(o->found[i], from) &&
		    try_file(im, o, o->found[i], SYMHOW_DEBUGLINK, read, ctx, depth + 1))
			return 1;
	}
	return 0;
}

static int try_file(struct image *im, struct symopts *o, const char *path, int how,
		    symmap_read read, void *ctx, int depth)
{
	char err[4400];
	struct symfile *sf = calloc(1, sizeof(*sf));
	if (!sf)
		return 0;
	im->tried++;
	if (symfile_open(sf, path, err, sizeof(err))) {
		note(im, "%s", err);
		free(sf);
		return 0;
	}
	/* a file without DWARF that names its debug file: that one first */
	if (!sf->has_dwarf && *sf->debuglink && depth < 2 &&
	    try_debuglink(im, o, path, sf->debuglink, read, ctx, depth)) {
		symfile_close(sf);
		free(sf);
		return 1;
	}
	if (check_code(im, sf, read, ctx)) {
		im->sf = sf;
		im->how = how;
		return 1;
	}
	symfile_close(sf);
	free(sf);
	return 0;
}

static bool exists(const char *p)
{
	struct stat st;
	return !stat(p, &st) && S_ISREG(st.st_mode);
}

/* STEM's symbol files: a --symbols file of that base name, then
 * STEM.debug, STEM.so, STEM.dll under the --symbols directories. */
static int try_stem(struct image *im, struct symopts *o, const char *stem, int how,
		    symmap_read read, void *ctx)
{
	/* single files given with --symbols whose base name matches */
	for (size_t i = 0; i < o->npaths; i++) {
		struct stat st;
		char s2[256];
		if (stat(o->paths[i], &st) || !S_ISREG(st.st_mode))
			continue;
		base_of(o->paths[i], s2, sizeof(s2));
		if (!strcmp(s2, stem) &&
		    try_file(im, o, o->paths[i], how, read, ctx, 0))
			return 1;
	}
	build_index(o);
	static const char *ext[] = { ".debug", ".so", ".dll" };
	for (size_t e = 0; e < 3; e++) {
		char want[300];
		snprintf(want, sizeof(want), "%s%s", stem, ext[e]);
		for (size_t i = 0; i < o->nfound; i++) {
			const char *b = strrchr(o->found[i], '/');
			b = b ? b + 1 : o->found[i];
			if (!strcmp(b, want) &&
			    try_file(im, o, o->found[i], how, read, ctx, 0))
				return 1;
		}
	}
	return 0;
}

/* The name Guid.xref gives im->guid: a --symbols file named *.xref, then
 * each Guid.xref under the --symbols directories (FV/Guid.xref of a build
 * directory). 1 found, 0 not (noted). */
static int guid_name(struct image *im, struct symopts *o, char *name, size_t cap)
{
	char err[4400];
	int nxref = 0;
	build_index(o);
	for (size_t i = 0; i < o->npaths + o->nfound; i++) {
		const char *p = i < o->npaths ? o->paths[i] : o->found[i - o->npaths];
		size_t n = strlen(p);
		if (i < o->npaths ? n < 5 || strcmp(p + n - 5, ".xref") || !exists(p)
				  : n < 9 || strcmp(p + n - 9, "Guid.xref"))
			continue;
		nxref++;
		int rc = symguid_lookup(p, im->guid, name, cap, err, sizeof(err));
		if (rc < 0)
			note(im, "%s", err);
		if (rc > 0) {
			note(im, "FvFile %s is %s in %s", im->guid, name, p);
			return 1;
		}
	}
	if (nxref)
		note(im, "FvFile %s is in no Guid.xref under --symbols", im->guid);
	else if (o->npaths)
		note(im, "no Guid.xref under --symbols to name FvFile %s (an EDK2 build "
		     "directory has FV/Guid.xref)", im->guid);
	*name = 0;
	return 0;
}

/* A GNU ld map: used when its code sections lie in the image's code
 * sections (from its PE headers), or when the headers cannot be read. */
static int try_map(struct image *im, const char *path, symmap_read read, void *ctx)
{
	char err[4400], why[512];
	struct symfile *sf = calloc(1, sizeof(*sf));
	if (!sf)
		return 0;
	im->tried++;
	if (ldmap_open(sf, path, err, sizeof(err))) {
		note(im, "%s", err);
		free(sf);
		return 0;
	}
	uint8_t hdr[4096];
	int got = read(ctx, im->base, hdr, sizeof(hdr));
	int ok = got > 0 ? ldmap_check(sf, hdr, (size_t)got, im->size, why, sizeof(why)) : -1;
	/* no headers (the trace's images hold code only): the map's code
	 * sections must then be code the image has, first byte to last */
	for (size_t i = 0; ok < 0 && i < sf->ncode; i++) {
		const struct symcode *c = &sf->code[i];
		uint8_t b;
		int first = read(ctx, im->base + c->addr, &b, 1) == 1;
		int last = read(ctx, im->base + c->addr + c->size - 1, &b, 1) == 1;
		/* the image's code neither starts before it nor runs on a page
		 * past its end (GenFw's padding) */
		int before = c->addr && read(ctx, im->base + c->addr - 1, &b, 1) == 1;
		int after = read(ctx, im->base + c->addr + c->size + LDMAP_SLACK, &b, 1) == 1;
		if (first != last || (first && (before || after)) ||
		    (im->size && c->addr + c->size > im->size)) {
			snprintf(why, sizeof(why), "section %s [0x%llx, 0x%llx) is not where the "
				 "image's code is (the same start, the size within a page): a "
				 "different build", c->name,
				 (unsigned long long)c->addr,
				 (unsigned long long)(c->addr + c->size));
			ok = 0;
		} else if (first && i + 1 == sf->ncode) {
			ok = 1;
		}
	}
	if (!ok) {
		note(im, "%s: %s", path, why);
		symfile_close(sf);
		free(sf);
		return 0;
	}
	if (ok < 0)
		note(im, "%s: neither the image's headers nor its code are in the trace's code "
		     "images: the map's sections are not checked", path);
	im->sf = sf;
	im->how = SYMHOW_MAP;
	im->map_checked = ok > 0;
	return 1;
}

static int try_map_named(struct image *im, struct symopts *o, const char *stem,
			 symmap_read read, void *ctx)
{
	char want[300];
	snprintf(want, sizeof(want), "%s.map", stem);
	build_index(o);
	for (size_t i = 0; i < o->nfound; i++) {
		const char *b = strrchr(o->found[i], '/');
		b = b ? b + 1 : o->found[i];
		if (!strcmp(b, want) && try_map(im, o->found[i], read, ctx))
			return 1;
	}
	return 0;
}

/* Does IMAGE (--symbols IMAGE=FILE) name the image called name: the same
 * with or without ".efi", in any case. */
bool symopts_names_image(const char *name, const char *image)
{
	size_t n = strlen(name), k = strlen(image);
	if (n >= 4 && !strcasecmp(name + n - 4, ".efi"))
		n -= 4;
	if (k >= 4 && !strcasecmp(image + k - 4, ".efi"))
		k -= 4;
	return n == k && !strncasecmp(name, image, n);
}

void symmap_resolve(struct image *im, struct symopts *o, symmap_read read, void *ctx)
{
	char stem[256] = "", mapsib[4300] = "";
	im->sf = NULL;
	im->how = SYMHOW_NONE;
	im->notes[0] = 0;
	im->tried = 0;
	im->code_rejects = 0;
	if (!im->size) {
		/* it owns no address: symbols could name nothing, and its code
		 * cannot be compared */
		note(im, "the image's size is 0 (images.json): it holds no code; no symbols");
		return;
	}
	/* --symbols IMAGE=FILE: the user's word, still checked against the code */
	for (size_t i = 0; i < o->nbinds; i++)
		if (symopts_names_image(im->name, o->bind_img[i])) {
			if (try_file(im, o, o->bind_file[i], SYMHOW_GIVEN, read, ctx, 0))
				return;
			note(im, "%s (--symbols %s=%s) is not used: see above", o->bind_file[i],
			     o->bind_img[i], o->bind_file[i]);
		}
	if (*im->pdb) {
		char p[4200];
		snprintf(p, sizeof(p), "%s", im->pdb);
		for (char *c = p; *c; c++)
			if (*c == '\\')
				*c = '/';
		for (size_t i = 0; i < o->nmaps; i++) {
			size_t n = strlen(o->map_old[i]);
			if (!strncmp(p, o->map_old[i], n)) {
				char q[4200];
				snprintf(q, sizeof(q), "%s%s", o->map_new[i], p + n);
				snprintf(p, sizeof(p), "%s", q);
				break;
			}
		}
		base_of(p, stem, sizeof(stem));
		const char *dot = strrchr(p, '.');
		bool pdb = dot && !strcasecmp(dot, ".pdb");
		if (pdb)
			note(im, "%s: PDB symbols (MSVC/CLANGPDB builds) are not supported; "
			     "looking for an ELF of the same name", p);
		else if (exists(p) && try_file(im, o, p, im->pdb_is_image ? SYMHOW_IMAGE
							: SYMHOW_CODEVIEW, read, ctx, 0))
			return;
		/* EDK2: DWARF of NAME.dll is in NAME.debug beside it */
		char sib[4300];
		int dl = dot ? (int)(dot - p) : (int)strlen(p);
		snprintf(sib, sizeof(sib), "%.*s.debug", dl, p);
		if (exists(sib) && try_file(im, o, sib, SYMHOW_CODEVIEW, read, ctx, 0))
			return;
		snprintf(mapsib, sizeof(mapsib), "%.*s.map", dl, p);
		if (!exists(mapsib))
			*mapsib = 0;
		if (!pdb && !exists(p) && !exists(sib))
			note(im, "%s: recorded build path not found%s", p,
			     o->nmaps ? " (after --path-map)" : " (--path-map OLD=NEW rewrites it)");
	}
	if (!*stem)
		base_of(im->name, stem, sizeof(stem));
	if (!*stem) {
		note(im, "no name to look for symbols by");
		return;
	}
	if (try_stem(im, o, stem, SYMHOW_BASENAME, read, ctx))
		return;
	/* an FvFile GUID: the module name FV/Guid.xref gives it */
	char gname[256] = "";
	if (*im->guid && guid_name(im, o, gname, sizeof(gname)) && strcmp(gname, stem) &&
	    try_stem(im, o, gname, SYMHOW_GUID, read, ctx))
		return;
	/* last: GNU ld's NAME.map, beside the recorded path, then by name;
	 * never after an ELF of the name showed other code (its map is that
	 * build's too, and a map cannot be checked byte by byte) */
	if (im->code_rejects) {
		note(im, "%s.map not tried: a symbol file of that name is another build", stem);
		return;
	}
	if (*mapsib && try_map(im, mapsib, read, ctx))
		return;
	if (try_map_named(im, o, stem, read, ctx) ||
	    (*im->guid && *gname && try_map_named(im, o, gname, read, ctx)))
		return;
	if (!o->npaths && !im->tried)
		note(im, "no symbol file for %s: give its build directory or file with "
		     "--symbols", stem);
	else if (!im->tried)
		note(im, "no %s.debug, %s.so, %s.dll or %s.map under --symbols", stem, stem, stem,
		     stem);
	else
		note(im, "no usable symbol file for %s (see above)", stem);
}

void symmap_release(struct image *im)
{
	if (im->sf) {
		symfile_close(im->sf);
		free(im->sf);
	}
	im->sf = NULL;
}
