/*
 * GNU ld map files: see ldmap.h. The map is untrusted text: every line is
 * parsed on its own, numbers are checked, and a file without the linker's
 * memory map section is refused.
 */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/util/file_io.h"
#include "host/symbols/ldmap.h"

#define MAP_MAX (256u << 20)

/* one function's range before the list is sorted */
struct mapfn {
	uint64_t lo, hi;
	const char *name;
};

struct mapread {
	struct symfile *sf;
	struct mapfn *fn;
	size_t nfn, fn_cap;
	/* the input section being read: [lo, hi), its name ("" for .text) */
	uint64_t in_lo, in_hi;
	char in_name[256];
	bool in_code;
	bool out_code;	/* in a code output section */
	/* symbols inside it, in map order */
	struct mapfn *sym;
	size_t nsym, sym_cap;
};

static int push(struct mapfn **v, size_t *n, size_t *cap, uint64_t lo, uint64_t hi,
		const char *name)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 256;
		struct mapfn *p = realloc(*v, c * sizeof(*p));
		if (!p)
			return -1;
		*v = p;
		*cap = c;
	}
	(*v)[(*n)++] = (struct mapfn){ lo, hi, name };
	return 0;
}

/* The function name of a symbol or input section: GCC's clone and
 * partition suffixes dropped (foo.constprop.0, foo.part.0, foo.cold). */
static size_t clean_len(const char *s, size_t len)
{
	static const char *sfx[] = { ".constprop.", ".part.", ".isra.", ".lto_priv.",
				     ".cold", ".clone.", ".localalias" };
	size_t best = len;
	for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		size_t sl = strlen(sfx[i]);
		for (size_t k = 1; k + sl <= len; k++)
			if (!memcmp(s + k, sfx[i], sl) && k < best)
				best = k;
	}
	return best;
}

static int by_lo(const void *a, const void *b)
{
	const struct mapfn *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The input section ends: its functions, split at its symbols. */
static int flush_input(struct mapread *m)
{
	int rc = 0;
	if (m->in_code && m->in_hi > m->in_lo) {
		if (m->nsym)
			qsort(m->sym, m->nsym, sizeof(*m->sym), by_lo);
		uint64_t at = m->in_lo;
		const char *name = *m->in_name ? m->in_name : NULL;
		for (size_t i = 0; i <= m->nsym && !rc; i++) {
			uint64_t next = i < m->nsym ? m->sym[i].lo : m->in_hi;
			if (next > at && name) {
				size_t len = clean_len(name, strlen(name));
				const char *o = symfile_own_len(m->sf, name, len);
				rc = !o || push(&m->fn, &m->nfn, &m->fn_cap, at, next, o);
			}
			if (i < m->nsym) {
				at = next;
				name = m->sym[i].name;
			}
		}
	}
	for (size_t i = 0; i < m->nsym; i++)
		free((char *)m->sym[i].name);
	m->nsym = 0;
	m->in_code = false;
	m->in_lo = m->in_hi = 0;
	*m->in_name = 0;
	return rc ? -1 : 0;
}

static bool hexnum(const char *s, uint64_t *v, const char **end)
{
	if (strncmp(s, "0x", 2))
		return false;
	char *e;
	errno = 0;
	unsigned long long x = strtoull(s + 2, &e, 16);
	if (errno || e == s + 2)
		return false;
	*v = x;
	*end = e;
	return true;
}

static const char *skip_sp(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* "ADDR SIZE ..." at s: 1 read, 0 not that form */
static int addr_size(const char *s, uint64_t *addr, uint64_t *size)
{
	const char *e;
	s = skip_sp(s);
	if (!hexnum(s, addr, &e) || (*e != ' ' && *e != '\t'))
		return 0;
	s = skip_sp(e);
	return hexnum(s, size, &e) && (!*e || *e == ' ' || *e == '\t');
}

static bool is_code_out(const char *name)
{
	return !strncmp(name, ".text", 5) && (!name[5] || name[5] == '.');
}

/* An output section: its code sections are kept for the check. 0, or -1
 * (why set when not out of memory). */
static int out_section(struct mapread *m, const char *name, uint64_t a, uint64_t s,
		       const char **why)
{
	if (flush_input(m))
		return -1;
	m->out_code = is_code_out(name);
	if (!m->out_code || !s)
		return 0;
	if (a + s < a) {
		*why = "an output section runs past 2^64";
		return -1;
	}
	struct symfile *sf = m->sf;
	struct symcode *c = realloc(sf->code, (sf->ncode + 1) * sizeof(*c));
	if (!c)
		return -1;
	sf->code = c;
	c = &sf->code[sf->ncode++];
	memset(c, 0, sizeof(*c));
	c->addr = a;
	c->size = s;
	snprintf(c->name, sizeof(c->name), "%s", name);
	return 0;
}

/* An input section of a code output section: a function's range. */
static int in_section(struct mapread *m, const char *name, uint64_t a, uint64_t s)
{
	if (flush_input(m))
		return -1;
	if (!m->out_code || !s || a + s < a)
		return 0;
	m->in_code = true;
	m->in_lo = a;
	m->in_hi = a + s;
	/* .text.NAME (also .text.unlikely.NAME, .text.hot.NAME) */
	const char *fn = "";
	if (!strncmp(name, ".text.", 6)) {
		fn = name + 6;
		if (!strncmp(fn, "unlikely.", 9) || !strncmp(fn, "startup.", 8) ||
		    !strncmp(fn, "hot.", 4) || !strncmp(fn, "exit.", 5))
			fn = strchr(fn, '.') + 1;
	}
	snprintf(m->in_name, sizeof(m->in_name), "%s", fn);
	return 0;
}

/* The whole file, NUL-terminated; NULL with "PATH: reason" in err. */
static char *read_text(const char *path, size_t *len, char *err, size_t errlen)
{
	int fd = open_regular(path, err, errlen);
	if (fd < 0)
		return NULL;
	struct stat st;
	char *buf = NULL;
	if (fstat(fd, &st) || st.st_size > MAP_MAX) {
		snprintf(err, errlen, "%s: larger than %u bytes, not a map file", path, MAP_MAX);
		goto out;
	}
	size_t n = 0, cap = (size_t)st.st_size;
	bool bad = false;
	buf = malloc(cap + 1);
	if (!buf) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	while (n < cap) {
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r < 0) {
				snprintf(err, errlen, "%s: %s", path, strerror(errno));
				bad = true;
			}
			break;
		}
		n += (size_t)r;
	}
	if (bad) {
		free(buf);
		buf = NULL;
		goto out;
	}
	buf[n] = 0;
	*len = n;
out:
	close(fd);
	return buf;
}

int ldmap_open(struct symfile *sf, const char *path, char *err, size_t errlen)
{
	memset(sf, 0, sizeof(*sf));
	sf->fd = -1;
	sf->from_map = true;
	snprintf(sf->path, sizeof(sf->path), "%s", path);
	size_t len;
	char *text = read_text(path, &len, err, errlen);
	if (!text)
		return -1;
	const char *why = NULL;
	struct mapread m = { .sf = sf };
	char *p = strstr(text, "\nLinker script and memory map\n");
	if (!p || memchr(text, 0, len)) {
		why = "not a GNU ld map file (no \"Linker script and memory map\")";
		goto out;
	}
	p = strchr(p + 1, '\n') + 1;
	const char *fmt = strstr(p, "\nOUTPUT(");
	sf->machine = !fmt ? 0
		      : strstr(fmt, "x86-64)") || strstr(fmt, "x86_64)") ? EM_X86_64
		      : strstr(fmt, "i386)") ? EM_386 : 0;
	/* a section whose addresses follow on the next line (a long name) */
	char pending[256] = "";
	bool pending_out = false;
	for (char *line = p, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		uint64_t a, s;
		if (*pending) {
			bool ok = addr_size(line, &a, &s);
			int rc = !ok ? 0 : pending_out ? out_section(&m, pending, a, s, &why)
							: in_section(&m, pending, a, s);
			*pending = 0;
			if (rc)
				goto fail;
			if (ok)
				continue;
		}
		if (line[0] == '.' || (line[0] == ' ' && line[1] == '.')) {
			bool outsec = line[0] == '.';
			const char *n = outsec ? line : line + 1;
			size_t nlen = strcspn(n, " \t");
			char name[256];
			if (nlen >= sizeof(name))
				continue;
			memcpy(name, n, nlen);
			name[nlen] = 0;
			if (addr_size(n + nlen, &a, &s)) {
				if (outsec ? out_section(&m, name, a, s, &why) : in_section(&m, name, a, s))
					goto fail;
				continue;
			}
			/* the section ends what came before it */
			if (flush_input(&m))
				goto oom;
			if (outsec)
				m.out_code = is_code_out(name);
			if (!*skip_sp(n + nlen)) {
				snprintf(pending, sizeof(pending), "%s", name);
				pending_out = outsec;
			}
			continue;
		}
		/* "        0xADDR        symbol" inside the current input section */
		const char *t = skip_sp(line), *e;
		if (!m.in_code || t == line || !hexnum(t, &a, &e))
			continue;
		t = skip_sp(e);
		size_t sl = strcspn(t, " \t");
		if (!sl || t[sl] || strchr(t, '=') || !strncmp(t, "0x", 2) || a < m.in_lo ||
		    a >= m.in_hi)
			continue;
		char *sym = strndup(t, clean_len(t, sl));
		if (!sym || push(&m.sym, &m.nsym, &m.sym_cap, a, a, sym)) {
			free(sym);
			goto oom;
		}
	}
	if (flush_input(&m))
		goto oom;
	if (!sf->ncode) {
		why = "no code section (.text) in the map";
		goto out;
	}
	if (!m.nfn) {
		why = "no functions in the map's code sections";
		goto out;
	}
	qsort(m.fn, m.nfn, sizeof(*m.fn), by_lo);
	sf->funcs = calloc(m.nfn, sizeof(*sf->funcs));
	if (!sf->funcs)
		goto oom;
	for (size_t i = 0; i < m.nfn; i++) {
		/* overlapping input sections (a broken map): a range ends where
		 * the next begins */
		if (sf->nfuncs && m.fn[i].lo < sf->funcs[sf->nfuncs - 1].hi) {
			if (m.fn[i].lo == sf->funcs[sf->nfuncs - 1].lo)
				continue;
			sf->funcs[sf->nfuncs - 1].hi = m.fn[i].lo;
		}
		sf->funcs[sf->nfuncs++] = (struct symfunc){ m.fn[i].lo, m.fn[i].hi, m.fn[i].lo,
							    m.fn[i].name, false, 0 };
	}
	goto out;
fail:
	if (why)
		goto out;
oom:
	why = "out of memory";
out:
	for (size_t i = 0; i < m.nsym; i++)
		free((char *)m.sym[i].name);
	free(m.sym);
	free(m.fn);
	free(text);
	if (why) {
		snprintf(err, errlen, "%s: %s", path, why);
		symfile_close(sf);
		return -1;
	}
	return 0;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int ldmap_check(const struct symfile *sf, const uint8_t *hdr, size_t n, uint64_t image_size,
		char *why, size_t cap)
{
	if (n < 64 || hdr[0] != 'M' || hdr[1] != 'Z')
		return -1;
	uint32_t pe = le32(hdr + 0x3c);
	if (pe > n - 24 || memcmp(hdr + pe, "PE\0\0", 4))
		return -1;
	unsigned nsec = hdr[pe + 6] | hdr[pe + 7] << 8;
	size_t tab = (size_t)pe + 24 + (hdr[pe + 20] | hdr[pe + 21] << 8);
	if (tab > n || nsec > (n - tab) / 40)
		return -1;
	for (size_t i = 0; i < sf->ncode; i++) {
		const struct symcode *c = &sf->code[i];
		if (image_size && (c->addr >= image_size || c->size > image_size - c->addr)) {
			snprintf(why, cap, "section %s [0x%" PRIx64 ", 0x%" PRIx64 ") lies outside "
				 "the image (%" PRIu64 " bytes)", c->name, c->addr, c->addr + c->size,
				 image_size);
			return 0;
		}
		bool inside = false;
		for (unsigned k = 0; k < nsec && !inside; k++) {
			const uint8_t *s = hdr + tab + 40 * k;
			uint64_t va = le32(s + 12), vs = le32(s + 8), raw = le32(s + 16);
			uint32_t ch = le32(s + 36);
			/* IMAGE_SCN_CNT_CODE, IMAGE_SCN_MEM_EXECUTE */
			if (!(ch & 0x20000020u))
				continue;
			uint64_t end = va + (vs > raw ? vs : raw);
			/* GenFw starts the section where the ELF's is and pads its
			 * end to the section alignment (at most a page) */
			inside = c->addr == va && c->addr + c->size <= end &&
				 end - (c->addr + c->size) < LDMAP_SLACK;
		}
		if (!inside) {
			snprintf(why, cap, "section %s [0x%" PRIx64 ", 0x%" PRIx64 ") is not inside "
				 "the image's code section at that RVA (the same start, the size "
				 "within a page): a different build, or sections GenFw moved", c->name, c->addr, c->addr + c->size);
			return 0;
		}
	}
	return 1;
}
