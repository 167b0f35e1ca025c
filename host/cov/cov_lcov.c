/*
 * lcov tracefile from a trace: see cov_lcov.h.
 *
 * Lines: an instruction of a DWARF line table sequence (from its first row
 * to its end_sequence) belongs to the lines of the is_stmt rows at the
 * highest address at or below it (over every CU: a header's line may have
 * code in several; several lines may start at one address). A line's hit
 * count is the number of executions of its most-executed instruction: code
 * may enter a line past its first instruction (a loop's condition, a jump
 * into a statement). A line with conditional branches counts instead the
 * decisions of its most-decided branch (taken + not taken): it is hit
 * exactly when one of its branches went one way or the other, as lcov 2
 * requires of a line and its branches. A function's count is the number
 * of executions of its entry.
 *
 * Branches: every conditional branch (Jcc, J*CXZ, LOOP*: the decoder's
 * X86_IC_JCC) inside a function with line info, on the line of the last
 * is_stmt row at or before it, gives two BRDA records: taken and not taken.
 * The flow decoder ends a run at each such branch; where the flow went on
 * (the next run, or the IP of an interrupt that came first) tells which.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/x86_insn.h"
#include "host/cov/blk_table.h"
#include "host/cov/cov_lcov.h"
#include "host/util/file_io.h"
#include "host/util/grow.h"
#include "core/pt_image.h"

#define CMD "efipt coverage"

struct lrow {
	uint64_t addr;		/* absolute: image base + ELF address */
	uint32_t file;
	int line;
	uint32_t seq;		/* order in the line tables */
	uint32_t lid;		/* its (file, line): index into lcount */
};

/* A sequence of a line table: [lo, hi) of image img (absolute). */
struct lseq {
	uint64_t lo, hi;
	size_t img;
};

/* An instruction of a line table sequence, on line lid. */
struct linsn {
	uint64_t addr;		/* absolute */
	uint32_t lid;
};

/* A conditional branch and what the trace did at it. */
struct lbranch {
	uint64_t addr, fall, target;	/* absolute */
	uint32_t file;
	int line;
	uint32_t lid;
	uint64_t execs, taken, not_taken;
};

struct lfunc {
	uint64_t entry;		/* absolute */
	uint32_t file;
	int line;
	const char *name;
	char *own;		/* a clone's own name (name points here), or NULL */
	const struct symfile *sf;
	uint64_t base;
	uint32_t inl;		/* an inlined copy: index + 1 in sf->inl;
				 * 0: the function's own code */
	int decl_line;		/* an inlined copy's declaration line (0: not known) */
};

struct lcov {
	char **files;		/* interned source paths */
	uint32_t nfiles, files_cap;
	struct lrow *rows;
	size_t nrows, rows_cap;
	struct lseq *seqs;
	size_t nseqs, seqs_cap;
	struct lfunc *fn;
	size_t nfn, fn_cap;
	uint64_t *addr;		/* the addresses whose executions count, sorted */
	uint64_t *count;
	size_t naddr;
	struct linsn *insn;	/* the instructions whose executions lines count */
	size_t ninsn, insn_cap;
	uint64_t *lcount;	/* per lid: its most-executed instruction's count */
	struct lbranch *br;	/* sorted by address while decoding */
	size_t nbr, br_cap;
	long pending;		/* the branch the last block ended at, or -1 */
	/* the distinct blocks: first/n the indices into hit (of addr) of the
	 * counted addresses among their instructions, tag the conditional
	 * branch they end at (-1: none) */
	struct blk_table blocks;
	uint32_t *hit;
	size_t nhit, hit_cap;
	bool oom;
};

/* Linear interning is fine: a build has hundreds of files, looked up per
 * CU file change, not per row (see add_rows). */
static uint32_t intern(struct lcov *l, const char *path)
{
	for (uint32_t i = l->nfiles; i-- > 0;)
		if (!strcmp(l->files[i], path))
			return i;
	size_t cap = l->files_cap;
	char *s = strdup(path);
	if (!s || !grow_array((void **)&l->files, &cap, l->nfiles, sizeof(*l->files), 1024)) {
		free(s);
		l->oom = true;
		return UINT32_MAX;
	}
	l->files_cap = (uint32_t)cap;
	l->files[l->nfiles] = s;
	return l->nfiles++;
}

/* src made absolute with the CU's compilation directory, without "./"
 * and "//" segments (genhtml reads the file there). */
static void source_path(const char *comp_dir, const char *src, char *buf, size_t cap)
{
	if (src[0] != '/' && comp_dir && comp_dir[0])
		snprintf(buf, cap, "%s/%s", comp_dir, src);
	else
		snprintf(buf, cap, "%s", src);
	char *w = buf;
	for (const char *r = buf; *r;) {
		if (r[0] == '/' && (r[1] == '/' || (r[1] == '.' && (r[2] == '/' || !r[2])))) {
			r += r[1] == '/' ? 1 : 2;
			continue;
		}
		if (w == buf && r[0] == '.' && r[1] == '/') {
			r += 2;
			continue;
		}
		*w++ = *r++;
	}
	*w = 0;
}

/* Is ELF address a in a code section of sf? Rows elsewhere are of code
 * the linker discarded (left at address 0, or what a section held before
 * --gc-sections dropped it): they are not in the image. */
static bool in_code(const struct symfile *sf, uint64_t a)
{
	for (size_t i = 0; i < sf->ncode; i++)
		if (a >= sf->code[i].addr && a - sf->code[i].addr < sf->code[i].size)
			return true;
	return false;
}

/* Does image k of t own address a (core/pt_image.h: where images overlap,
 * the one that starts last)? Lines, functions and branches of code another
 * image owns are that image's, as in every other command. */
static bool owns(struct session *t, size_t k, uint64_t a)
{
	return !t->st.overlap || ptimg_list_find(t->images.v, t->images.n, sizeof(*t->images.v), a,
						 &t->st.last, 1) == (int)k;
}

/* Every is_stmt row in code of the line tables of image k's symbol file. */
static int add_rows(struct lcov *l, struct session *t, size_t k)
{
	const struct symfile *sf = t->images.v[k].sf;
	uint64_t base = t->images.v[k].base;
	const char *path = sf->path;
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
	if (!dw) {
		close(fd);
		return -1;
	}
	Dwarf_Off off = 0, next;
	size_t hsize;
	const char *last_src = NULL;
	uint32_t last_file = UINT32_MAX;
	while (!l->oom && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		Dwarf_Lines *lines;
		size_t n;
		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_getsrclines(&cu, &lines, &n) == 0) {
			Dwarf_Attribute at;
			const char *comp_dir = dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &at));
			last_src = NULL;
			bool in_seq = false;
			Dwarf_Addr seq_lo = 0;
			for (size_t i = 0; i < n && !l->oom; i++) {
				Dwarf_Line *ln = dwarf_onesrcline(lines, i);
				Dwarf_Addr a;
				int lineno;
				bool stmt, end;
				if (!ln || dwarf_lineaddr(ln, &a) || dwarf_lineno(ln, &lineno) ||
				    dwarf_linebeginstatement(ln, &stmt) || dwarf_lineendsequence(ln, &end))
					continue;
				if (!in_seq)
					seq_lo = a;
				in_seq = !end;
				if (end && seq_lo < a && in_code(sf, seq_lo)) {
					if (!grow_array((void **)&l->seqs, &l->seqs_cap, l->nseqs,
							sizeof(*l->seqs), 256)) {
						l->oom = true;
						break;
					}
					l->seqs[l->nseqs++] = (struct lseq){ base + seq_lo, base + a, k };
				}
				const char *src = dwarf_linesrc(ln, NULL, NULL);
				if (!stmt || end || !src || lineno <= 0 || !in_code(sf, a) ||
				    !owns(t, k, base + a))
					continue;
				if (src != last_src) {
					char full[4096];
					source_path(comp_dir, src, full, sizeof(full));
					last_src = src;
					last_file = intern(l, full);
				}
				if (!grow_array((void **)&l->rows, &l->rows_cap, l->nrows,
						 sizeof(*l->rows), 1024)) {
					l->oom = true;
					break;
				}
				l->rows[l->nrows] = (struct lrow){ base + a, last_file, lineno,
								   (uint32_t)l->nrows, 0 };
				l->nrows++;
			}
		}
		off = next;
	}
	dwarf_end(dw);
	close(fd);
	return 0;
}

static int by_file_line_addr(const void *a, const void *b)
{
	const struct lrow *x = a, *y = b;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int by_addr(const void *a, const void *b)
{
	const struct lrow *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The row at address a exactly (rows sorted by address), or NULL. */
static const struct lrow *row_at(const struct lcov *l, uint64_t a)
{
	size_t lo = 0, hi = l->nrows;
	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		if (l->rows[m].addr < a)
			lo = m + 1;
		else
			hi = m;
	}
	return lo < l->nrows && l->rows[lo].addr == a ? &l->rows[lo] : NULL;
}

/*
 * A function's line: that of its entry's row (rows sorted by address), or
 * an earlier one where the function's own code up to end has rows there,
 * from its declaration's line on (parameters saved on the lines of the
 * parameter list). lcov knows a function by the lines from its record's
 * on: code on the lines before would be its predecessor's.
 */
static int first_line(const struct lcov *l, const struct lrow *entry, uint64_t end, int decl_line)
{
	int line = entry->line;
	for (const struct lrow *r = entry; decl_line > 0 && r < l->rows + l->nrows && r->addr < end; r++)
		if (r->file == entry->file && r->line >= decl_line && r->line < line)
			line = r->line;
	return line;
}

/* The last row (in table order) at the highest address <= a, or NULL. */
static const struct lrow *row_before(const struct lcov *l, uint64_t a)
{
	size_t lo = 0, hi = l->nrows;
	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		if (l->rows[m].addr <= a)
			lo = m + 1;
		else
			hi = m;
	}
	return lo ? &l->rows[lo - 1] : NULL;
}

/* What add_code() records. */
enum { CODE_LINES = 1, CODE_BRANCHES = 2 };

/* The instructions in [lo, hi) (symbol file addresses) of image sf at
 * base, found by decoding from lo: each on its lines (CODE_LINES), the
 * conditional branches among them on theirs (CODE_BRANCHES). Stops at
 * bytes that do not decode (data, or a range that is not code). */
static void add_code(struct lcov *l, struct session *t, size_t img, uint64_t lo,
			 uint64_t hi, int what)
{
	const struct symfile *sf = t->images.v[img].sf;
	uint64_t base = t->images.v[img].base;
	const struct symcode *sec = NULL;
	for (size_t i = 0; i < sf->ncode && !sec; i++)
		if (sf->code[i].bytes && lo >= sf->code[i].addr &&
		    lo - sf->code[i].addr < sf->code[i].size)
			sec = &sf->code[i];
	if (!sec)
		return;
	uint64_t end = sec->addr + sec->size < hi ? sec->addr + sec->size : hi;
	enum x86_mode mode = sf->machine == 3 /* EM_386 */ ? X86_MODE_32 : X86_MODE_64;
	for (uint64_t a = lo; a < end;) {
		struct x86_insn in;
		int n = x86_decode(&in, sec->bytes + (a - sec->addr), sec->addr + sec->size - a,
				   base + a, mode);
		if (n <= 0)
			return;
		const struct lrow *r = owns(t, img, base + a) ? row_before(l, base + a) : NULL;
		/* on each line with a row at the address it lies at */
		size_t q = r && (what & CODE_LINES) ? (size_t)(r - l->rows) + 1 : 0;
		while (q-- > 0 && l->rows[q].addr == r->addr) {
			if (!grow_array((void **)&l->insn, &l->insn_cap, l->ninsn, sizeof(*l->insn),
					4096)) {
				l->oom = true;
				return;
			}
			l->insn[l->ninsn++] = (struct linsn){ base + a, l->rows[q].lid };
		}
		if ((what & CODE_BRANCHES) && in.iclass == X86_IC_JCC && in.has_target) {
			if (r) {
				if (!grow_array((void **)&l->br, &l->br_cap, l->nbr, sizeof(*l->br),
						1024)) {
					l->oom = true;
					return;
				}
				l->br[l->nbr++] = (struct lbranch){ base + a, base + a + (uint64_t)n,
								    in.target, r->file, r->line,
								    r->lid, 0, 0, 0 };
			}
		}
		a += (uint64_t)n;
	}
}

static int br_by_addr(const void *a, const void *b)
{
	const struct lbranch *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int br_by_file_line(const void *a, const void *b)
{
	const struct lbranch *x = a, *y = b;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static long find_branch(const struct lcov *l, uint64_t a)
{
	size_t lo = 0, hi = l->nbr;
	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		if (l->br[m].addr < a)
			lo = m + 1;
		else
			hi = m;
	}
	return lo < l->nbr && l->br[lo].addr == a ? (long)lo : -1;
}

/* The flow went on at ip after the pending branch. A branch to its own
 * fall-through counts as not taken: both go to the same place. */
static inline void resolve(struct lcov *l, uint64_t ip)
{
	if (l->pending < 0)
		return;
	struct lbranch *b = &l->br[l->pending];
	if (ip == b->fall)
		b->not_taken++;
	else if (ip == b->target)
		b->taken++;
	l->pending = -1;
}

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static long find_addr(const struct lcov *l, uint64_t a)
{
	size_t lo = 0, hi = l->naddr;
	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		if (l->addr[m] < a)
			lo = m + 1;
		else
			hi = m;
	}
	return lo < l->naddr && l->addr[lo] == a ? (long)lo : -1;
}

/* A block seen for the first time: the counted addresses among its
 * instructions (lengths from the batch's code) and the branch it ends at. */
static void first_sight(struct lcov *l, struct blk_entry *e, const struct ptflow_blk *b,
			const struct ptimg *img)
{
	uint8_t lens[PTFLOW_BLOCK_MAX];
	unsigned n = ptflow_blk_lens(img, b, lens);
	uint64_t ip = b->ip, last = b->ip;
	e->first = (uint32_t)l->nhit;
	for (unsigned i = 0; i < n; ip += lens[i++]) {
		last = ip;
		if (!l->naddr || ip < l->addr[0] || ip > l->addr[l->naddr - 1])
			continue;
		long k = find_addr(l, ip);
		if (k < 0)
			continue;
		if (l->nhit >= UINT32_MAX ||
		    !grow_array((void **)&l->hit, &l->hit_cap, l->nhit, sizeof(*l->hit), 4096)) {
			l->oom = true;
			break;
		}
		l->hit[l->nhit++] = (uint32_t)k;
	}
	e->n = (uint32_t)(l->nhit - e->first);
	/* a conditional branch ends its block: where the flow went says
	 * whether it was taken (to[0] its fall-through, to[1] its target:
	 * resolve()'s order); br has fewer than 2^31 entries (72 bytes each) */
	long k = n && b->iclass == X86_IC_JCC ? find_branch(l, last) : -1;
	e->tag = k <= INT32_MAX ? (int32_t)k : -1;
	if (e->tag >= 0) {
		e->to[0] = l->br[k].fall;
		e->to[1] = l->br[k].target;
	}
}

/* Blocks looked up ahead of their turn (blk_table_prefetch()). */
#define LOOKAHEAD 8

/* Blocks: each distinct one worked out once, then only counted; the lines'
 * counts are summed from the blocks' at the end (add_block_counts()). */
static void on_batch(void *ctx, const struct ptflow_batch *batch)
{
	struct lcov *l = ctx;
	const struct ptflow_blk *bs = batch->b;
	for (size_t i = 0; i < batch->n && i < LOOKAHEAD; i++)
		blk_table_prefetch(&l->blocks, bs[i].ip, bs[i].size, bs[i].mode);
	for (size_t i = 0; i < batch->n && !l->oom; i++) {
		const struct ptflow_blk *b = &bs[i];
		if (i + LOOKAHEAD < batch->n)
			blk_table_prefetch(&l->blocks, b[LOOKAHEAD].ip, b[LOOKAHEAD].size,
					   b[LOOKAHEAD].mode);
		/* a counted batch (no order): each block's own next says */
		uint64_t x = batch->execs ? batch->execs[i] : 1;
		if (!batch->execs)
			resolve(l, b->ip);
		bool fresh;
		struct blk_entry *e = blk_table_get(&l->blocks, b->ip, b->size, b->mode, &fresh);
		if (!e) {
			l->oom = true;
			return;
		}
		if (fresh)
			first_sight(l, e, b, batch->image);
		e->execs += x;
		if (e->tag < 0)
			continue;
		/* where the flow went, as resolve() would count it; the
		 * branch's counts are summed at the end (add_block_counts()) */
		if (!b->next && !batch->execs)
			l->pending = (long)e->tag; /* an event or the next block says */
		else if (b->next == e->to[0])
			e->went[0] += x;
		else if (b->next == e->to[1])
			e->went[1] += x;
	}
}

/* The blocks' counts into the lines' instructions and their branches. */
static void add_block_counts(struct lcov *l)
{
	for (size_t i = 0; i < l->blocks.cap; i++) {
		const struct blk_entry *e = &l->blocks.e[i];
		if (!e->used)
			continue;
		for (uint32_t h = 0; h < e->n; h++)
			l->count[l->hit[e->first + h]] += e->execs;
		if (e->tag >= 0) {
			l->br[e->tag].execs += e->execs;
			l->br[e->tag].not_taken += e->went[0];
			l->br[e->tag].taken += e->went[1];
		}
	}
}

/* Events between a branch and where the flow went on (ptflow_ev_way()). */
static void on_event(void *ctx, const struct ptflow_event *ev)
{
	struct lcov *l = ctx;
	switch (ptflow_ev_way(ev->type)) {
	case PTFLOW_WAY_AT_IP:
		if (ev->has_ip)
			resolve(l, ev->ip);
		break;
	case PTFLOW_WAY_KEPT:
		break;
	case PTFLOW_WAY_LOST:
		l->pending = -1;
	}
}

static uint64_t count_at(const struct lcov *l, uint64_t a)
{
	long k = find_addr(l, a);
	return k >= 0 ? l->count[k] : 0;
}

/*
 * The FNDA count of the function whose records are fn[g..e) (one line, one
 * name), of the file whose functions end at fend and whose rows are
 * rows[r..rend): the executions of its entries. A function that also ran
 * inlined (or only did) counts at least the executions of the most-run
 * line between its record's line and the next function's: lcov knows a
 * function by those lines, and lcov 2 refuses one that did not run while
 * one of them did. Inlined copies have no entry a trace could count: the
 * compiler moves and merges their code, and their DWARF ranges need not
 * hold every instruction on their lines.
 */
static uint64_t fn_runs(const struct lcov *l, size_t g, size_t e, size_t fend, size_t r,
			size_t rend)
{
	uint64_t c = 0;
	bool inlined = false;
	for (size_t i = g; i < e; i++) {
		if (l->fn[i].inl)
			inlined = true;
		else
			c += count_at(l, l->fn[i].entry);
	}
	if (!inlined)
		return c;
	int from = l->fn[g].line, to = INT_MAX;
	for (size_t i = e; i < fend; i++)
		if (l->fn[i].line > from) {
			to = l->fn[i].line;
			break;
		}
	while (r < rend && l->rows[r].line < from)
		r++;
	for (; r < rend && l->rows[r].line < to; r++)
		if (l->lcount[l->rows[r].lid] > c)
			c = l->lcount[l->rows[r].lid];
	return c;
}

static void put_path(struct atomic_file *af, const struct srcmap *m, const char *p)
{
	for (size_t i = 0; i < m->n; i++) {
		size_t k = strlen(m->old[i]);
		if (!strncmp(p, m->old[i], k)) {
			char full[4200];
			snprintf(full, sizeof(full), "%s%s", m->new_[i], p + k);
			fprintf(af->f, "SF:%s\n", term_safe(full));
			return;
		}
	}
	fprintf(af->f, "SF:%s\n", term_safe(p)); /* a record per line: no control bytes */
}

static int by_fn_file(const void *a, const void *b)
{
	const struct lfunc *x = a, *y = b;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The name of the ELF function symbol at address a of sf's file into buf:
 * 0, or -1 when there is none. */
static int elf_func_name(const struct symfile *sf, uint64_t a, char *buf, size_t cap)
{
	int fd = open(sf->path, O_RDONLY), rc = -1;
	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	Elf_Scn *scn = NULL;
	while (e && rc && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize && rc; i++) {
			GElf_Sym sym;
			const char *n;
			if (gelf_getsym(d, (int)i, &sym) && GELF_ST_TYPE(sym.st_info) == STT_FUNC &&
			    sym.st_value == a && (n = elf_strptr(e, sh.sh_link, sym.st_name)) && *n) {
				snprintf(buf, cap, "%s", n);
				rc = 0;
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return rc;
}

static int by_file_name_line(const void *a, const void *b)
{
	const struct lfunc *x = a, *y = b;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->entry < y->entry ? -1 : x->entry > y->entry;
}

/* Rename l->fn[k] to name (copied). 0, or -1 out of memory. */
static int rename_fn(struct lfunc *f, const char *name)
{
	char *s = strdup(name);
	if (!s)
		return -1;
	free(f->own);
	f->own = s;
	f->name = s;
	return 0;
}

/* The end of the group of functions from g on with g's file and name. */
static size_t same_name_end(const struct lcov *l, size_t g)
{
	size_t i = g + 1;
	while (i < l->nfn && l->fn[i].file == l->fn[g].file && !strcmp(l->fn[i].name, l->fn[g].name))
		i++;
	return i;
}

/*
 * lcov knows a file's functions by name. The DWARF gives a compiler's
 * clone of a function (GCC's partial inlining: foo.part.0, foo.isra.0) the
 * function's own name, at another line: where one name has several lines,
 * each function takes its ELF symbol's name; those still sharing one are
 * told apart as NAME@0xADDRESS (all but the first line). Copies at one line
 * stay one function (a header's static function in several CUs).
 * Functions are sorted by file, line, name after. 0, or -1 out of memory.
 */
static int name_clones(struct lcov *l)
{
	char buf[512];
	for (int pass = 0; pass < 2; pass++) {
		if (l->nfn)
			qsort(l->fn, l->nfn, sizeof(*l->fn), by_file_name_line);
		for (size_t g = 0, i; g < l->nfn; g = i) {
			i = same_name_end(l, g);
			if (l->fn[i - 1].line == l->fn[g].line)
				continue; /* one line: one function */
			for (size_t k = pass ? g + 1 : g; k < i; k++) {
				struct lfunc *f = &l->fn[k];
				uint64_t a = f->entry - f->base;
				if (pass && f->line == l->fn[g].line)
					continue;
				if (!pass && (f->inl || elf_func_name(f->sf, a, buf, sizeof(buf)) ||
					      !strcmp(buf, f->name)))
					continue;
				if (pass)
					snprintf(buf, sizeof(buf), "%s@0x%" PRIx64, f->name, a);
				if (rename_fn(f, buf))
					return -1;
			}
		}
	}
	if (l->nfn)
		qsort(l->fn, l->nfn, sizeof(*l->fn), by_fn_file);
	return 0;
}

/* Is function i (sorted by file, line, name) the one before it again? */
static bool same_fn(const struct lcov *l, size_t first, size_t i)
{
	return i > first && l->fn[i].line == l->fn[i - 1].line &&
	       !strcmp(l->fn[i].name, l->fn[i - 1].name);
}

/* The DA count of line in rows[from..to), the rows of one file by line. */
static uint64_t line_count(const struct lcov *l, size_t from, size_t to, int line)
{
	while (from < to) {
		size_t mid = from + (to - from) / 2;
		if (l->rows[mid].line < line)
			from = mid + 1;
		else
			to = mid;
	}
	return from < l->nrows && l->rows[from].line == line ? l->lcount[l->rows[from].lid] : 0;
}

/* Rows -> one DA per (file, line); then the tracefile. */
static void write_info(struct atomic_file *af, struct lcov *l, const struct srcmap *m)
{
	size_t nf = 0;
	size_t b = 0;
	for (uint32_t file = 0, r = 0, f = 0; file < l->nfiles; file++) {
		bool any = (r < l->nrows && l->rows[r].file == file) ||
			   (f < l->nfn && l->fn[f].file == file) ||
			   (b < l->nbr && l->br[b].file == file);
		if (!any)
			continue;
		fputs("TN:\n", af->f);
		put_path(af, m, l->files[file]);
		/* a static function of a header has a copy per CU that uses it:
		 * lcov knows functions by name, so they are one, counts added */
		size_t f0 = f, fnf = 0, fnh = 0, rend = r;
		while (rend < l->nrows && l->rows[rend].file == file)
			rend++;
		for (; f < l->nfn && l->fn[f].file == file; f++)
			if (!same_fn(l, f0, f))
				fprintf(af->f, "FN:%d,%s\n", l->fn[f].line, term_safe(l->fn[f].name));
		for (size_t i = f0; i < f; i++) {
			size_t g = i;
			while (i + 1 < f && same_fn(l, f0, i + 1))
				i++;
			uint64_t c = fn_runs(l, g, i + 1, f, r, rend);
			fnf++;
			fnh += c > 0;
			fprintf(af->f, "FNDA:%" PRIu64 ",%s\n", c, term_safe(l->fn[i].name));
		}
		fprintf(af->f, "FNF:%zu\nFNH:%zu\n", fnf, fnh);
		/* BRDA:LINE,BLOCK,BRANCH,TAKEN: BLOCK numbers the line's branches
		 * in address order; BRANCH 0 is taken, 1 not taken; '-' where the
		 * branch never ran (lcov's rule, geninfo(1)) on a line that never
		 * ran either, 0 on a line that ran (lcov 2 refuses a hit line
		 * whose branches are all '-': "inconsistent") */
		size_t brf = 0, brh = 0;
		for (unsigned blk = 0; b < l->nbr && l->br[b].file == file; b++) {
			const struct lbranch *x = &l->br[b];
			blk = b && l->br[b - 1].file == file && l->br[b - 1].line == x->line ? blk + 1 : 0;
			if (x->execs || line_count(l, r, rend, x->line))
				fprintf(af->f, "BRDA:%d,%u,0,%" PRIu64 "\nBRDA:%d,%u,1,%" PRIu64 "\n",
					x->line, blk, x->taken, x->line, blk, x->not_taken);
			else
				fprintf(af->f, "BRDA:%d,%u,0,-\nBRDA:%d,%u,1,-\n", x->line, blk,
					x->line, blk);
			brf += 2;
			brh += (x->taken > 0) + (x->not_taken > 0);
		}
		if (brf)
			fprintf(af->f, "BRF:%zu\nBRH:%zu\n", brf, brh);
		size_t lf = 0, lh = 0;
		for (; r < l->nrows && l->rows[r].file == file;) {
			const struct lrow *first = &l->rows[r];
			uint64_t c = l->lcount[first->lid];
			fprintf(af->f, "DA:%d,%" PRIu64 "\n", first->line, c);
			lf++;
			lh += c > 0;
			while (r < l->nrows && l->rows[r].file == file && l->rows[r].line == first->line)
				r++;
		}
		fprintf(af->f, "LF:%zu\nLH:%zu\nend_of_record\n", lf, lh);
		nf++;
	}
	(void)nf;
}

/*
 * lcov knows a function by the lines from its FN record to the next one's,
 * and lcov 2 refuses a tracefile where a function did not run but one of
 * its lines did. Code inlined into other functions runs on its own lines:
 * so every inlined copy is counted as a run of its function (the function's
 * FN record and FNDA include it), and a static function that only ever
 * runs inlined, which has no symbol, gets a record of its own.
 */
static void add_inlined_copies(struct lcov *l, struct session *t, size_t k)
{
	const struct image *im = &t->images.v[k];
	const struct symfile *sf = im->sf;
	const char *last_decl = NULL;
	uint32_t file = 0;
	for (size_t i = 0; i < sf->ninl && !l->oom; i++) {
		const struct syminline *in = &sf->inl[i];
		uint64_t a = im->base + in->entry;
		if (!in->decl_file || in->decl_line <= 0 || !in->entry || !in_code(sf, in->entry) ||
		    !owns(t, k, a))
			continue;
		if (in->decl_file != last_decl) {
			char full[4096];
			source_path(in->comp_dir, in->decl_file, full, sizeof(full));
			file = intern(l, full);
			if (file == UINT32_MAX)
				break;
			last_decl = in->decl_file;
		}
		if (!grow_array((void **)&l->fn, &l->fn_cap, l->nfn, sizeof(*l->fn), 1024)) {
			l->oom = true;
			break;
		}
		l->fn[l->nfn++] = (struct lfunc){ a, file, in->decl_line, in->name, NULL, sf,
						  im->base, (uint32_t)i + 1, in->decl_line };
	}
}

/* The first line with code at or after line in file (rows sorted by file,
 * line), or 0. */
static int code_line_from(const struct lcov *l, uint32_t file, int line)
{
	size_t lo = 0, hi = l->nrows;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct lrow *r = &l->rows[mid];
		if (r->file < file || (r->file == file && r->line < line))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < l->nrows && l->rows[lo].file == file ? l->rows[lo].line : 0;
}

/* (file, line) of a function with code of its own, ordered. */
struct fn_at {
	uint32_t file;
	int line;
};

static int by_file_line(const void *a, const void *b)
{
	const struct fn_at *x = a, *y = b;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return (x->line > y->line) - (x->line < y->line);
}

/* Does one of own[0..n) begin in file at a line from `from` to `to`? */
static bool fn_between(const struct fn_at *own, size_t n, uint32_t file, int from, int to)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (own[mid].file < file || (own[mid].file == file && own[mid].line < from))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && own[lo].file == file && own[lo].line <= to;
}

/*
 * The line of each inlined copy: its function's where the function has its
 * own code in the file, else the first line with code from its declaration
 * on (genhtml, lcov 2, wants a line with code), unless another function
 * begins first (the copy's code then sits on no line of its own: it is
 * dropped, as a copy without such a line is). Rows sorted by file, line;
 * leaves fn sorted by file, name, line. -1 out of memory.
 */
static int place_copies(struct lcov *l)
{
	struct fn_at *own = malloc((l->nfn + 1) * sizeof(*own));
	if (!own)
		return -1;
	size_t nown = 0;
	for (size_t i = 0; i < l->nfn; i++)
		if (!l->fn[i].inl)
			own[nown++] = (struct fn_at){ l->fn[i].file, l->fn[i].line };
	qsort(own, nown, sizeof(*own), by_file_line);
	for (size_t i = 0; i < l->nfn; i++) {
		struct lfunc *f = &l->fn[i];
		if (!f->inl)
			continue;
		int c = code_line_from(l, f->file, f->decl_line);
		f->line = c > 0 && !fn_between(own, nown, f->file, f->decl_line, c) ? c : 0;
	}
	free(own);
	if (l->nfn)
		qsort(l->fn, l->nfn, sizeof(*l->fn), by_file_name_line);
	size_t n = 0;
	for (size_t g = 0, e; g < l->nfn; g = e) {
		e = same_name_end(l, g);
		int line = 0;
		for (size_t i = g; i < e && !line; i++)
			if (!l->fn[i].inl)
				line = l->fn[i].line;
		for (size_t i = g; i < e; i++) {
			struct lfunc *f = &l->fn[i];
			if (f->inl && line)
				f->line = line;
			if (f->line > 0)
				l->fn[n++] = *f;
		}
	}
	l->nfn = n;
	return 0;
}

int cov_lcov_run(struct session *t, const char *out, const struct srcmap *sm)
{
	struct lcov l = { 0 };
	struct atomic_file af;
	bool opened = false;
	int rc = 2;
	/* line rows of every image with symbols */
	for (unsigned i = 0; i < t->images.n && !l.oom; i++) {
		const struct image *im = &t->images.v[i];
		if (!im->sf) {
			fprintf(stderr, CMD ": %s: no symbol file, not in the tracefile (see "
				"'efipt symbols')\n", term_safe(im->name));
			continue;
		}
		size_t before = l.nrows;
		if (add_rows(&l, t, i))
			fprintf(stderr, CMD ": %s: no DWARF line table read\n", im->sf->path);
		else if (l.nrows == before)
			fprintf(stderr, CMD ": %s: %s has no source lines for its code (%s), not in "
				"the tracefile\n", term_safe(im->name), term_safe(im->sf->path),
				im->sf->from_map ? "a GNU ld map" : im->sf->has_dwarf ? "DWARF without "
				"line tables" : "no DWARF");
	}
	if (l.oom)
		goto oom;
	if (!l.nrows) {
		/* an empty tracefile is no coverage: genhtml and --merge refuse it */
		fprintf(stderr, CMD ": nothing to write to %s: no traced image has a symbol file "
			"with source lines (DWARF line tables; give the build with --symbols PATH, "
			"'efipt symbols' shows what each image has)\n", term_safe(out));
		goto out;
	}
	/* each (file, line) numbered; functions, at the line of the row at
	 * their entry */
	qsort(l.rows, l.nrows, sizeof(*l.rows), by_file_line_addr);
	uint32_t nlines = 0;
	for (size_t r = 0; r < l.nrows; r++) {
		if (r && (l.rows[r].file != l.rows[r - 1].file || l.rows[r].line != l.rows[r - 1].line))
			nlines++;
		l.rows[r].lid = nlines;
	}
	l.lcount = calloc((size_t)nlines + 1, sizeof(*l.lcount));
	if (!l.lcount)
		goto oom;
	qsort(l.rows, l.nrows, sizeof(*l.rows), by_addr);
	for (unsigned i = 0; i < t->images.n && !l.oom; i++) {
		const struct image *im = &t->images.v[i];
		for (size_t k = 0; im->sf && k < im->sf->nfuncs; k++) {
			const struct symfunc *sfn = &im->sf->funcs[k];
			if (sfn->entry < sfn->lo || sfn->entry >= sfn->hi)
				continue; /* a function's other range: counted once */
			const struct lrow *r = row_at(&l, im->base + sfn->entry);
			if (!r || !owns(t, i, im->base + sfn->entry))
				continue;
			if (!grow_array((void **)&l.fn, &l.fn_cap, l.nfn, sizeof(*l.fn), 1024)) {
				l.oom = true;
				break;
			}
			l.fn[l.nfn++] = (struct lfunc){ im->base + sfn->entry, r->file,
							first_line(&l, r, im->base + sfn->hi,
								   sfn->decl_line),
							sfn->name, NULL, im->sf, im->base, 0,
							0 };
		}
		if (im->sf && !l.oom)
			add_inlined_copies(&l, t, i);
		/* conditional branches of every range of a function with line info */
		for (size_t k = 0; im->sf && k < im->sf->nfuncs && !l.oom; k++) {
			const struct symfunc *sfn = &im->sf->funcs[k];
			if (row_at(&l, im->base + sfn->entry) && owns(t, i, im->base + sfn->entry))
				add_code(&l, t, i, sfn->lo, sfn->hi, CODE_BRANCHES);
		}
	}
	/* the instructions of every sequence, on their lines */
	for (size_t k = 0; k < l.nseqs && !l.oom; k++) {
		uint64_t b = t->images.v[l.seqs[k].img].base;
		add_code(&l, t, l.seqs[k].img, l.seqs[k].lo - b, l.seqs[k].hi - b, CODE_LINES);
	}
	if (l.oom)
		goto oom;
	if (l.nrows)
		qsort(l.rows, l.nrows, sizeof(*l.rows), by_file_line_addr);
	if (place_copies(&l))
		goto oom;
	if (l.nfn)
		qsort(l.fn, l.nfn, sizeof(*l.fn), by_fn_file);
	if (name_clones(&l))
		goto oom;
	/* the counted addresses: each instruction on a line, each function's
	 * entry */
	l.addr = malloc((l.ninsn + l.nfn + 1) * sizeof(*l.addr));
	if (!l.addr)
		goto oom;
	for (size_t k = 0; k < l.ninsn; k++)
		l.addr[l.naddr++] = l.insn[k].addr;
	for (size_t f = 0; f < l.nfn; f++)
		l.addr[l.naddr++] = l.fn[f].entry;
	if (l.naddr)
		qsort(l.addr, l.naddr, sizeof(*l.addr), by_u64);
	size_t u = 0;
	for (size_t k = 0; k < l.naddr; k++)
		if (!u || l.addr[k] != l.addr[u - 1])
			l.addr[u++] = l.addr[k];
	l.naddr = u;
	l.count = calloc(l.naddr + 1, sizeof(*l.count));
	if (!l.count)
		goto oom;
	if (l.nbr)
		qsort(l.br, l.nbr, sizeof(*l.br), br_by_addr);
	l.pending = -1;
	struct flow_consumer c = { &l, on_batch, on_event, NULL, NULL, PTFLOW_TIME_NONE, 0, true,
				   NULL };
	long errs = session_decode(t, 0, &c, 1);
	if (errs < 0)
		goto out;
	if (l.oom)
		goto oom;
	add_block_counts(&l);
	for (size_t k = 0; k < l.ninsn; k++) {
		uint64_t n = count_at(&l, l.insn[k].addr);
		if (n > l.lcount[l.insn[k].lid])
			l.lcount[l.insn[k].lid] = n;
	}
	for (size_t k = 0; k < l.nbr; k++)
		l.lcount[l.br[k].lid] = 0;
	for (size_t k = 0; k < l.nbr; k++) {
		uint64_t n = l.br[k].taken + l.br[k].not_taken;
		if (n > l.lcount[l.br[k].lid])
			l.lcount[l.br[k].lid] = n;
	}
	if (l.nbr)
		qsort(l.br, l.nbr, sizeof(*l.br), br_by_file_line);
	if (atomic_open(&af, "coverage", out))
		goto out;
	opened = true;
	write_info(&af, &l, sm);
	opened = false;
	if (atomic_commit(&af, "coverage"))
		goto out;
	rc = errs ? 1 : 0;
	goto out;
oom:
	fprintf(stderr, CMD ": out of memory\n");
out:
	if (opened)
		atomic_abort(&af);
	for (uint32_t i = 0; i < l.nfiles; i++)
		free(l.files[i]);
	free(l.files);
	free(l.rows);
	for (size_t i = 0; i < l.nfn; i++)
		free(l.fn[i].own);
	free(l.fn);
	free(l.addr);
	free(l.count);
	free(l.br);
	free(l.insn);
	free(l.seqs);
	free(l.lcount);
	blk_table_free(&l.blocks);
	free(l.hit);
	return rc;
}
