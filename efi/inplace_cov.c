/* coverage.drcov of an in-place decode; see inplace_cov.h. */
#include <efi.h>
#include <efilib.h>

#include "core/mem.h"
#include "efi/inplace_cov.h"

EFI_STATUS inplace_cov_init(struct inplace_cov *ic, const struct ptsum_image *images,
			    unsigned n, const struct ptimg *code)
{
	efipt_memset(ic, 0, sizeof(*ic));
	if (n > PTCOV_BLOCK_MAX) /* drcov module ids are 16 bits */
		n = PTCOV_BLOCK_MAX;
	ic->img = AllocatePool((n ? n : 1) * sizeof(*ic->img));
	if (!ic->img)
		return EFI_OUT_OF_RESOURCES;
	uint64_t budget = INPLACE_COV_MAX;
	for (unsigned i = 0; i < n; i++) {
		struct ptcov_image *m = &ic->img[ic->n];
		efipt_memset(m, 0, sizeof(*m));
		m->base = images[i].base;
		m->size = images[i].size;
		if (!m->size)
			continue;
		ptcov_set_name(m, images[i].name);
		ptcov_read_pe(m, code);
		uint64_t need = ptcov_bits_size(m->size);
		if (need <= budget && (m->bits = AllocatePool((UINTN)need)))
			budget -= need;
		else
			ic->skipped++;
		ic->n++;
	}
	ptcov_init(&ic->cov, ic->img, ic->n);
	/* blocks marked already: without, every block is decoded (slower, the same) */
	ic->nseen = INPLACE_COV_SEEN;
	while (!(ic->seen = AllocatePool(ic->nseen * sizeof(*ic->seen))) && ic->nseen > 1024)
		ic->nseen /= 2;
	if (!ic->seen)
		ic->nseen = 0;
	return EFI_SUCCESS;
}

struct sink {
	struct esp_file *w;
	EFI_STATUS st;
	uint64_t bytes;
};

static void put_count(void *ctx, const void *p, size_t n)
{
	(void)p;
	((struct sink *)ctx)->bytes += n;
}

static void put_file(void *ctx, const void *p, size_t n)
{
	struct sink *s = ctx;
	if (!EFI_ERROR(s->st))
		s->st = esp_file_append(s->w, p, n);
}

EFI_STATUS inplace_cov_write(struct inplace_cov *ic, struct run *run)
{
	static struct esp_file w;
	struct sink s = { &w, EFI_SUCCESS, 0 };
	ptcov_drcov_write(&ic->cov, "efipt", put_count, &s);
	EFI_STATUS st = run_file_begin(run, "coverage.drcov", s.bytes, &w);
	if (EFI_ERROR(st))
		return st;
	ptcov_drcov_write(&ic->cov, "efipt", put_file, &s);
	return run_file_end(run, "coverage.drcov", &w, s.st);
}

void inplace_cov_free(struct inplace_cov *ic)
{
	for (unsigned i = 0; i < ic->n; i++)
		if (ic->img[i].bits)
			FreePool(ic->img[i].bits);
	if (ic->img)
		FreePool(ic->img);
	if (ic->seen)
		FreePool(ic->seen);
	efipt_memset(ic, 0, sizeof(*ic));
}
