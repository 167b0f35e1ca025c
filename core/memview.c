/* Region view of code memory; see memview.h. */
#include "core/memview.h"
#include "core/mem.h"

void memview_init(struct memview *v, struct memview_region *regions, unsigned max)
{
	v->r = regions;
	v->max = max;
	v->n = 0;
	v->last = 0;
}

bool memview_add(struct memview *v, uint64_t base, uint64_t size, const void *bytes)
{
	if (v->n >= v->max || !size || base + size < base)
		return false;
	v->r[v->n].base = base;
	v->r[v->n].size = size;
	v->r[v->n].bytes = bytes;
	v->n++;
	return true;
}

static bool holds(const struct memview_region *r, uint64_t ip)
{
	return ip - r->base < r->size;
}

int memview_read(void *ctx, uint64_t ip, uint8_t *buf, size_t n)
{
	struct memview *v = ctx;
	/* the last region first (decoding stays in one region for long
	 * stretches), unless an earlier region, which wins, also holds ip */
	unsigned k = v->last;
	bool hit = k < v->n && holds(&v->r[k], ip);
	for (unsigned i = 0; hit && i < k; i++)
		hit = !holds(&v->r[i], ip);
	if (!hit) {
		for (k = 0; k < v->n && !holds(&v->r[k], ip); k++)
			;
		if (k == v->n)
			return 0;
		v->last = k;
	}
	uint64_t left = v->r[k].size - (ip - v->r[k].base);
	if (n > left)
		n = (size_t)left;
	efipt_memcpy(buf, v->r[k].bytes + (ip - v->r[k].base), n);
	return (int)n;
}
