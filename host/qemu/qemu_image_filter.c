/* efipt qemu --filter image=NAME; see qemu_image_filter.h. */
#include "host/qemu/qemu_image_filter.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "host/util/file_io.h"
#include "host/qemu/fv.h"

/* a range the filter can take: runs in place, and its end does not wrap */
static int in_place(const struct fv_module *m)
{
	return fv_module_xip(m) && m->image_base + m->image_size > m->image_base;
}

/* FFS file types (PI spec vol. 3, EFI_FV_FILETYPE_*), for the message */
static const char *ffs_type(uint8_t t)
{
	switch (t) {
	case 0x05: return "DXE_CORE";
	case 0x07: return "DXE driver";
	case 0x08: return "combined PEIM/DXE driver";
	case 0x09: return "application";
	case 0x0a: return "MM driver";
	case 0x0d: return "MM core";
	default: return "module";
	}
}

/* Levenshtein distance, ignoring case; names are at most 63 characters */
static unsigned distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned row[64];
	if (la > 63 || lb > 63)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned diag = row[0];
		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned up = row[j];
			unsigned sub = diag + (strncasecmp(a + i - 1, b + j - 1, 1) != 0);
			unsigned best = up + 1 < row[j - 1] + 1 ? up + 1 : row[j - 1] + 1;
			row[j] = sub < best ? sub : best;
			diag = up;
		}
	}
	return row[lb];
}

/* close: a few edits away, or one name inside the other (any case) */
static int close_to(const char *want, const char *name)
{
	return distance(want, name) <= 3 || (strlen(want) >= 3 && strcasestr(name, want)) ||
	       strcasestr(want, name);
}

/* has an earlier module the same name (so each name is listed once)? */
static int listed(const struct fv_modules *ms, unsigned k, int (*keep)(const struct fv_module *))
{
	for (unsigned j = 0; j < k; j++)
		if ((!keep || keep(&ms->m[j])) && !strcmp(ms->m[j].name, ms->m[k].name))
			return 1;
	return 0;
}

#define ADD(...) (n += (size_t)snprintf(err + n, n < errlen ? errlen - n : 0, __VA_ARGS__))

/* NAME is no module that runs in place: say what it is and what is */
static void refuse(const struct fv_modules *ms, const char *flash, const char *want, char *err,
		   size_t errlen)
{
	const char *opt = ptcfg_opt_name(PTCFG_OPT_FILTER);
	size_t n = 0;
	const struct fv_module *dxe = NULL;
	for (unsigned k = 0; k < ms->n && !dxe; k++)
		if (!strcmp(ms->m[k].name, want))
			dxe = &ms->m[k];
	if (dxe && (dxe->type == 0x03 || dxe->type == 0x04 || dxe->type == 0x06))
		ADD("--%s image=%s: %s (FFS file %s) of %s has no PE/TE image whose headers give "
		    "where it runs", opt, want, want, dxe->guid_text, flash);
	else if (dxe)
		ADD("--%s image=%s: %s is a %s (FFS file %s) of %s: it is decompressed and loaded "
		    "at an address chosen at run time, so its range is not known before QEMU "
		    "runs: take it from a previous run (its images.json, or 'efipt info RUNDIR' "
		    "with efipt.efi's images merged) and give --%s START-END", opt, want, want,
		    ffs_type(dxe->type), dxe->guid_text, flash, opt);
	else
		ADD("--%s image=%s: no module of %s has that name", opt, want, flash);
	unsigned close = 0;
	for (unsigned k = 0; k < ms->n; k++) {
		const struct fv_module *m = &ms->m[k];
		if (strcmp(m->name, want) && close_to(want, m->name) && !listed(ms, k, NULL))
			ADD("%s%s (%s)", close++ ? ", " : "; close matches: ", m->name,
			    in_place(m) ? "runs in place" : "loaded at run time");
	}
	unsigned xip = 0;
	for (unsigned k = 0; k < ms->n; k++)
		if (in_place(&ms->m[k]) && !listed(ms, k, in_place))
			ADD("%s%s", xip++ ? ", " : "; the modules that run in place, which "
				   "image=NAME can filter: ", ms->m[k].name);
	if (!xip)
		ADD("; no module of it runs in place (none has a SEC/PEI image)");
	if (n >= errlen && errlen > 4)
		memcpy(err + errlen - 4, "...", 4);
}

int qemu_image_filters(struct ptcfg *cfg, const char *flash, char *err, size_t errlen)
{
	unsigned want = 0;
	for (unsigned i = 0; i < cfg->nranges; i++)
		want += cfg->range[i].image != NULL;
	if (!want)
		return 0;
	struct fv_modules ms;
	int lr = fv_modules_load(flash, &ms);
	if (lr == -1) {
		snprintf(err, errlen, "--%s image=NAME: the flash image %s cannot be read (see "
			 "above)", ptcfg_opt_name(PTCFG_OPT_FILTER), flash);
		return -1;
	}
	if (lr) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* named modules only: a filter is asked for by name */
	unsigned named = 0;
	for (unsigned k = 0; k < ms.n; k++)
		if (ms.m[k].name[0])
			ms.m[named++] = ms.m[k];
	ms.n = named;
	int rc = 0;
	for (unsigned i = 0; i < cfg->nranges && !rc; i++) {
		const char *name = cfg->range[i].image;
		if (!name)
			continue;
		const struct fv_module *hit = NULL;
		for (unsigned k = 0; k < ms.n && !hit; k++)
			if (in_place(&ms.m[k]) && !strcmp(ms.m[k].name, name))
				hit = &ms.m[k];
		if (!hit) {
			refuse(&ms, flash, name, err, errlen);
			rc = -1;
			break;
		}
		/* the same name running in place twice (two volumes): which one? */
		for (unsigned k = 0; k < ms.n; k++)
			if (&ms.m[k] != hit && in_place(&ms.m[k]) && !strcmp(ms.m[k].name, name) &&
			    ms.m[k].image_base != hit->image_base) {
				snprintf(err, errlen, "--%s image=%s: %s holds two modules of that "
					 "name running in place, at 0x%" PRIx64 " and 0x%" PRIx64
					 ": give --%s START-END for the one meant",
					 ptcfg_opt_name(PTCFG_OPT_FILTER), name, flash,
					 hit->image_base, ms.m[k].image_base,
					 ptcfg_opt_name(PTCFG_OPT_FILTER));
				rc = -1;
				break;
			}
		if (rc)
			break;
		uint64_t a = hit->image_base, b = hit->image_base + hit->image_size - 1;
		ptcfg_resolve_range(cfg, i, a, b);
		printf("efipt qemu: filter %u: image %s = 0x%" PRIx64 "-0x%" PRIx64
		       " (runs in place from %s)\n", i, name, a, b, flash);
	}
	fv_modules_free(&ms);
	return rc;
}
