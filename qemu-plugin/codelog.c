/* Code changes while traced; see codelog.h. */
#include <stdlib.h>
#include <string.h>

#include "qemu-plugin/codelog.h"
#include "qemu-plugin/outfile.h"

bool codelog_add(struct codelog *l, unsigned cpu, uint64_t pos, uint64_t addr,
		 const uint8_t *bytes, unsigned len)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		struct codechg *r = realloc(l->r, cap * sizeof(*r));
		if (!r) {
			l->failed = true;
			return false;
		}
		l->r = r;
		l->cap = cap;
	}
	struct codechg *c = &l->r[l->n];
	memset(c, 0, sizeof(*c));
	c->pos = pos;
	c->addr = addr;
	c->cpu = (uint16_t)cpu;
	c->len = (uint8_t)(len < CODECHG_MAX_LEN ? len : CODECHG_MAX_LEN);
	memcpy(c->bytes, bytes, c->len);
	c->by = (uint16_t)cpu;
	/* read without the lock by vCPUs looking for news (code_catch_up()) */
	__atomic_store_n(&l->n, l->n + 1, __ATOMIC_RELEASE);
	return true;
}

/* record i is a change that CPU cpu did not run first */
static bool is_foreign(const struct codelog *l, size_t i, unsigned cpu)
{
	return !(l->r[i].flags & CODECHG_OTHER_CPU) && l->r[i].cpu != cpu;
}

bool codelog_foreign(const struct codelog *l, unsigned cpu, size_t *seen)
{
	while (*seen < l->n && !is_foreign(l, *seen, cpu))
		++*seen;
	return *seen < l->n;
}

void codelog_copy_foreign(struct codelog *l, unsigned cpu, size_t *seen, uint64_t pos)
{
	size_t end = l->n; /* not the copies added here */
	for (; *seen < end; ++*seen) {
		if (!is_foreign(l, *seen, cpu))
			continue;
		struct codechg g = l->r[*seen];
		if (codelog_add(l, cpu, pos, g.addr, g.bytes, g.len)) {
			l->r[l->n - 1].flags = CODECHG_OTHER_CPU;
			l->r[l->n - 1].by = g.cpu;
		}
	}
}

size_t codelog_copies(const struct codelog *l)
{
	size_t k = 0;
	for (size_t i = 0; i < l->n; i++)
		k += (l->r[i].flags & CODECHG_OTHER_CPU) != 0;
	return k;
}

int codelog_write(const struct codelog *l, const char *dir, const uint64_t *drop, unsigned ncpus,
		  void (*file_cb)(void *ctx, const char *name, uint64_t size), void *ctx,
		  char *err, size_t errlen)
{
	struct outfile o;
	if (outfile_open(&o, dir, "codechanges.bin", err, errlen))
		return -1;
	uint8_t buf[CODECHG_RECORD];
	codechg_header(buf);
	outfile_write(&o, buf, CODECHG_HEADER);
	for (size_t i = 0; i < l->n; i++) {
		struct codechg c = l->r[i];
		uint64_t d = c.cpu < ncpus ? drop[c.cpu] : 0;
		c.pos = c.pos > d ? c.pos - d : 0;
		codechg_put(buf, &c);
		outfile_write(&o, buf, CODECHG_RECORD);
	}
	uint64_t size = o.size;
	if (outfile_commit(&o, err, errlen))
		return -1;
	if (file_cb)
		file_cb(ctx, "codechanges.bin", size);
	return 0;
}

void codelog_free(struct codelog *l)
{
	free(l->r);
	memset(l, 0, sizeof(*l));
}
