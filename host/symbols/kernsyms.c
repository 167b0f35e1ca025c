/* Linux kernel symbols from System.map or /proc/kallsyms; see kernsyms.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pt_pkt.h"
#include "host/util/file_io.h"
#include "host/symbols/kernsyms.h"

#define MAP_MAX (512u << 20)
#define SLIDE_STEP (2ull << 20)		/* CONFIG_PHYSICAL_ALIGN on x86-64 */
#define SLIDE_SPAN (1ull << 30)		/* KASLR moves the kernel within 1 GiB */
#define KERNEL_HALF 0xffff800000000000ull

void kernsyms_free(struct kernsyms *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->name[i]);
	free(k->addr);
	free(k->name);
	memset(k, 0, sizeof(*k));
}

struct ent {
	uint64_t addr;
	char *name;
};

static int by_addr(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int kernsyms_read(struct kernsyms *k, const char *path, char *err, size_t errlen)
{
	memset(k, 0, sizeof(*k));
	snprintf(k->path, sizeof(k->path), "%s", path);
	size_t len;
	char *text = read_small_file(NULL, path, MAP_MAX, &len);
	if (!text) {
		snprintf(err, errlen, "%s: cannot read it", path);
		return -1;
	}
	struct ent *e = NULL;
	size_t n = 0, cap = 0;
	uint64_t text_sym = 0, etext = 0;
	int rc = -1;
	for (char *line = text, *next; line < text + len; line = next) {
		next = memchr(line, '\n', (size_t)(text + len - line));
		next = next ? next + 1 : text + len;
		k->lines++;
		/* ADDRESS TYPE NAME [MODULE] */
		char *end;
		errno = 0;
		uint64_t a = strtoull(line, &end, 16);
		if (end == line || errno || *end != ' ' || end - line > 16)
			continue;
		char type = end[1];
		if (!type || end[2] != ' ')
			continue;
		char *name = end + 3, *ne = name;
		while (ne < next && *ne != '\n' && *ne != ' ' && *ne != '\t' && *ne != '\r')
			ne++;
		if (ne == name || ne - name > 255)
			continue;
		bool in_module = ne < next && (*ne == ' ' || *ne == '\t');
		if (!strncmp(name, "_text", 5) && ne - name == 5)
			text_sym = a;
		if (!strncmp(name, "_etext", 6) && ne - name == 6)
			etext = a;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (in_module)
			continue; /* a module's: not in the kernel image */
		if (!a) {
			k->zero++;
			continue;
		}
		if (n == cap) {
			size_t c = cap ? cap * 2 : 4096;
			struct ent *p = realloc(e, c * sizeof(*p));
			if (!p)
				goto out;
			e = p;
			cap = c;
		}
		e[n].addr = a;
		e[n].name = strndup(name, (size_t)(ne - name));
		if (!e[n].name)
			goto out;
		n++;
	}
	if (!n) {
		snprintf(err, errlen, "%s: %s", path,
			 k->zero ? "every text symbol has address 0 (/proc/kallsyms read without root, "
				   "or kptr_restrict=2)"
				 : "no text symbols (not a System.map or /proc/kallsyms)");
		goto out;
	}
	qsort(e, n, sizeof(*e), by_addr);
	k->addr = malloc(n * sizeof(*k->addr));
	k->name = malloc(n * sizeof(*k->name));
	if (!k->addr || !k->name) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		k->addr[i] = e[i].addr;
		k->name[i] = e[i].name;
		e[i].name = NULL;
	}
	k->n = n;
	k->text_lo = text_sym && text_sym <= k->addr[0] ? text_sym : k->addr[0];
	k->text_hi = etext && etext >= k->addr[n - 1] ? etext : k->addr[n - 1] + 1;
	rc = 0;
out:
	for (size_t i = 0; i < n; i++)
		free(e[i].name);
	free(e);
	free(text);
	if (rc)
		kernsyms_free(k);
	return rc;
}

static bool is_entry(const struct kernsyms *k, uint64_t a)
{
	size_t lo = 0, hi = k->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (k->addr[mid] < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < k->n && k->addr[lo] == a;
}

int kernsyms_find_slide(const struct kernsyms *k, const uint8_t *trace, size_t n, uint64_t *slide,
			unsigned *hits, char *why, size_t cap)
{
	/* the kernel-half targets, each distinct one once */
	uint64_t *t = NULL;
	size_t nt = 0, tcap = 0;
	struct ptpkt_decoder d;
	struct ptpkt_lastip li;
	ptpkt_init(&d, trace, n, 0);
	ptpkt_lastip_init(&li);
	int rc = -1;
	while (ptpkt_sync_forward(&d) == 0 && nt < (1u << 20)) {
		struct ptpkt p;
		int r;
		ptpkt_lastip_init(&li);
		while ((r = ptpkt_next(&d, &p)) > 0 && nt < (1u << 20)) {
			uint64_t ip;
			int got = ptpkt_lastip_apply(&li, &p, &ip);
			if (got != 1 || ip < KERNEL_HALF ||
			    (p.type != ptpkt_tip && p.type != ptpkt_tip_pge && p.type != ptpkt_fup))
				continue;
			if (nt == tcap) {
				size_t c = tcap ? tcap * 2 : 1024;
				uint64_t *q = realloc(t, c * sizeof(*q));
				if (!q)
					goto out;
				t = q;
				tcap = c;
			}
			t[nt++] = ip;
		}
		if (r == -ptpkt_err_eos || r == -ptpkt_err_truncated)
			break;
	}
	if (!nt) {
		snprintf(why, cap, "the trace names no address in the kernel's half of the address "
			 "space: no slide to find (give it: --kernel-symbols FILE:SLIDE)");
		goto out;
	}
	unsigned best = 0, second = 0;
	uint64_t best_slide = 0;
	for (uint64_t s = 0; s < SLIDE_SPAN; s += SLIDE_STEP) {
		unsigned h = 0;
		for (size_t i = 0; i < nt; i++)
			h += is_entry(k, t[i] - s);
		if (h > best) {
			second = best;
			best = h;
			best_slide = s;
		} else if (h > second) {
			second = h;
		}
	}
	if (best < 4 || best < 2 * second) {
		snprintf(why, cap, "no KASLR slide stands out: %u of %zu kernel branch targets are "
			 "function entries at the best (0x%llx), %u at the next",
			 best, nt, (unsigned long long)best_slide, second);
		goto out;
	}
	*slide = best_slide;
	*hits = best;
	snprintf(why, cap, "KASLR slide 0x%llx: %u of %zu kernel branch targets are function "
		 "entries there (next best %u)",
		 (unsigned long long)best_slide, best, nt, second);
	rc = 0;
out:
	free(t);
	return rc;
}

int kernsyms_image(const struct kernsyms *k, uint64_t slide, struct image *im)
{
	memset(im, 0, sizeof(*im));
	snprintf(im->name, sizeof(im->name), "vmlinux");
	im->base = k->text_lo + slide;
	im->size = k->text_hi - k->text_lo;
	struct symfile *sf = calloc(1, sizeof(*sf));
	if (!sf)
		return -1;
	sf->fd = -1;
	sf->from_map = true;
	snprintf(sf->path, sizeof(sf->path), "%s", k->path);
	sf->funcs = calloc(k->n, sizeof(*sf->funcs));
	if (!sf->funcs) {
		free(sf);
		return -1;
	}
	sf->funcs_cap = k->n;
	for (size_t i = 0; i < k->n; i++) {
		/* a symbol at the same address as the next is an alias: one function */
		if (i + 1 < k->n && k->addr[i + 1] == k->addr[i])
			continue;
		const char *nm = symfile_own(sf, k->name[i]);
		if (!nm) {
			symfile_close(sf);
			free(sf);
			return -1;
		}
		uint64_t lo = k->addr[i] - k->text_lo;
		uint64_t hi = (i + 1 < k->n ? k->addr[i + 1] : k->text_hi) - k->text_lo;
		sf->funcs[sf->nfuncs++] = (struct symfunc){ lo, hi, lo, nm, false, 0 };
	}
	im->sf = sf;
	im->how = SYMHOW_MAP;
	im->verified = false;
	snprintf(im->notes, sizeof(im->notes),
		 "kernel symbols from %.1000s (%zu functions), slide 0x%llx: names only, no code to "
		 "check them against",
		 k->path, sf->nfuncs, (unsigned long long)slide);
	return 0;
}
