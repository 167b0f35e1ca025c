/* Code changes while traced; see codelog.h. */
#include <stdlib.h>
#include <string.h>

#include "qemu-plugin/codelog.h"
#include "qemu-plugin/outfile.h"

void codelog_add(struct codelog *l, unsigned cpu, uint64_t pos, uint64_t addr,
		 const uint8_t *bytes, unsigned len)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		struct codechg *r = realloc(l->r, cap * sizeof(*r));
		if (!r) {
			l->failed = true;
			return;
		}
		l->r = r;
		l->cap = cap;
	}
	struct codechg *c = &l->r[l->n++];
	memset(c, 0, sizeof(*c));
	c->pos = pos;
	c->addr = addr;
	c->cpu = (uint16_t)cpu;
	c->len = (uint8_t)(len < CODECHG_MAX_LEN ? len : CODECHG_MAX_LEN);
	memcpy(c->bytes, bytes, c->len);
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
