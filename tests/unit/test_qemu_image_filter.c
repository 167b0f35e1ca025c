/* host/qemu/qemu_image_filter.c: --filter image=NAME resolved against a flash
 * image built here (tests/lib/fv_build): a SEC TE image and a PEIM PE image
 * run in place, a DXE driver does not, a PEIM without an image, two PEIMs
 * of one name; each refusal names the cause and what can be filtered. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/pt_rtit.h"
#include "host/qemu/qemu_image_filter.h"
#include "lib/fv_build.h"

static char flash_path[64];
static char err[4096];

/* ptcfg with the --filter values given, resolved against the flash */
static int resolve(struct ptcfg *cfg, const char *const *filters)
{
	char mb[256];
	struct strbuf sb;
	ptcfg_init(cfg);
	for (; *filters; filters++) {
		sb_init(&sb, mb, sizeof(mb));
		if (ptcfg_option(cfg, "--filter", *filters, &sb) != 2)
			return -2;
	}
	err[0] = 0;
	return qemu_image_filters(cfg, flash_path, err, sizeof(err));
}

int main(void)
{
	static struct fvb_buf fv, secs;
	fvb_begin(&fv);
	memset(&secs, 0, sizeof(secs));
	fvb_te(&secs, 0xfffcc000, 0x200, 0x2e00);
	fvb_ui(&secs, "SecMain");
	fvb_file(&fv, 0x11, 0x03, &secs);
	memset(&secs, 0, sizeof(secs));
	fvb_ui(&secs, "PlatformPei");
	fvb_pe(&secs, 0x828000, 0x5a00);
	fvb_file(&fv, 0x12, 0x06, &secs);
	memset(&secs, 0, sizeof(secs));
	fvb_ui(&secs, "PlatformDxe");
	fvb_pe(&secs, 0, 0x5000);
	fvb_file(&fv, 0x22, 0x07, &secs);
	memset(&secs, 0, sizeof(secs));
	fvb_ui(&secs, "NoImagePei");
	fvb_file(&fv, 0x33, 0x06, &secs);
	for (uint8_t k = 0; k < 2; k++) {
		memset(&secs, 0, sizeof(secs));
		fvb_ui(&secs, "TwicePei");
		fvb_te(&secs, 0x900000 + 0x10000u * k, 0x200, 0x800);
		fvb_file(&fv, (uint8_t)(0x44 + k), 0x06, &secs);
	}
	fvb_end(&fv);
	snprintf(flash_path, sizeof(flash_path), "/tmp/efipt-test-flash.XXXXXX");
	int fd = mkstemp(flash_path);
	CHECK(fd >= 0 && write(fd, fv.b, fv.n) == (ssize_t)fv.n && !close(fd), "flash image written");

	struct ptcfg cfg;
	int rc = resolve(&cfg, (const char *[]){ "image=SecMain", "0x1000-0x1fff",
						 "image=PlatformPei", NULL });
	CHECKF(!rc && cfg.nranges == 3 && !cfg.range[0].image && cfg.range[0].a == 0xfffcc000 &&
		       cfg.range[0].b == 0xfffcefff && cfg.range[1].a == 0x1000 &&
		       cfg.range[1].b == 0x1fff && cfg.range[2].a == 0x828000 &&
		       cfg.range[2].b == 0x82d9ff && cfg.range[2].cfg == RTIT_ADDR_CFG_FILTER,
	       "SEC (TE) and PEIM (PE) ranges, inclusive, an A-B range kept between them",
	       "rc %d: %s", rc, err);

	rc = resolve(&cfg, (const char *[]){ "image=PlatformDxe", NULL });
	CHECKF(rc == -1 && strstr(err, "--filter image=PlatformDxe: PlatformDxe is a DXE driver "
				       "(FFS file 00000022-0000-0000-0000-000000000000) of ") &&
		       strstr(err, "loaded at an address chosen at run time") &&
		       strstr(err, "give --filter START-END") &&
		       strstr(err, "close matches: PlatformPei (runs in place)") &&
		       strstr(err, "which image=NAME can filter: SecMain, PlatformPei, TwicePei") &&
		       cfg.range[0].image,
	       "a DXE driver refused: how to get its range, what can be filtered", "%s", err);

	rc = resolve(&cfg, (const char *[]){ "image=secmain", NULL });
	CHECKF(rc == -1 && strstr(err, "--filter image=secmain: no module of ") &&
		       strstr(err, "close matches: SecMain (runs in place)") && !strstr(err, "Dxe ("),
	       "names are exact; the case-folded one is a close match", "%s", err);

	rc = resolve(&cfg, (const char *[]){ "image=NoImagePei", NULL });
	CHECKF(rc == -1 && strstr(err, "NoImagePei (FFS file 00000033-0000-0000-0000-000000000000) "
				       "of ") && strstr(err, "has no PE/TE image"),
	       "a PEIM without an image refused", "%s", err);

	rc = resolve(&cfg, (const char *[]){ "image=TwicePei", NULL });
	CHECKF(rc == -1 && strstr(err, "two modules of that name running in place, at 0x900000 "
				       "and 0x910000"),
	       "a name running in place twice refused", "%s", err);

	rc = resolve(&cfg, (const char *[]){ "0x1000-0x1fff", NULL });
	unlink(flash_path);
	CHECK(!rc && cfg.range[0].a == 0x1000, "no image=: nothing to resolve");
	rc = resolve(&cfg, (const char *[]){ "image=SecMain", NULL });
	CHECKF(rc == -1 && strstr(err, "--filter image=NAME: the flash image ") &&
		       strstr(err, "cannot be read"),
	       "a flash image that cannot be read", "%s", err);
	return check_failures != 0;
}
