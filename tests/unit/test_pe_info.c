/* PE header facts: a real image (efipt.efi), a built image with a CodeView
 * record (file and mapped layouts), and hostile inputs. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/mem.h"
#include "core/pe_info.h"
#include "host/util/file_io.h"

/* A minimal PE32+ with one section (.text at RVA 0x1000, file 0x200) holding
 * a debug directory and an RSDS record. Returns the file size. */
static size_t build_pe(uint8_t *f, bool mapped, const char *pdb)
{
	memset(f, 0, 0x3000);
	f[0] = 'M';
	f[1] = 'Z';
	efipt_store_le(f + 0x3c, 0x80, 4);
	memcpy(f + 0x80, "PE\0\0", 4);
	uint8_t *coff = f + 0x84;
	efipt_store_le(coff, 0x8664, 2);
	efipt_store_le(coff + 2, 1, 2);    /* sections */
	efipt_store_le(coff + 16, 240, 2); /* optional header size */
	uint8_t *opt = f + 0x98;
	efipt_store_le(opt, 0x20b, 2);
	efipt_store_le(opt + 16, 0x1010, 4);         /* entry */
	efipt_store_le(opt + 24, 0x140000000ull, 8); /* image base */
	efipt_store_le(opt + 56, 0x3000, 4);         /* size of image */
	efipt_store_le(opt + 68, 10, 2);             /* EFI application */
	efipt_store_le(opt + 108, 16, 4);            /* data directories */
	uint32_t dbg_rva = 0x1100, cv_rva = 0x1200;
	efipt_store_le(opt + 112 + 6 * 8, dbg_rva, 4);
	efipt_store_le(opt + 112 + 6 * 8 + 4, 28, 4);
	uint8_t *sec = opt + 240;
	memcpy(sec, ".text", 5);
	efipt_store_le(sec + 8, 0x1000, 4);  /* virtual size */
	efipt_store_le(sec + 12, 0x1000, 4); /* RVA */
	efipt_store_le(sec + 16, 0x400, 4);  /* raw size */
	efipt_store_le(sec + 20, 0x200, 4);  /* raw offset */
	uint32_t base = mapped ? 0x1000 : 0x200; /* where RVA 0x1000 is in the buffer */
	uint8_t *dbg = f + base + (dbg_rva - 0x1000);
	size_t plen = strlen(pdb) + 1;
	efipt_store_le(dbg + 12, 2, 4); /* CodeView */
	efipt_store_le(dbg + 16, 24 + plen, 4);
	efipt_store_le(dbg + 20, cv_rva, 4);
	efipt_store_le(dbg + 24, base + (cv_rva - 0x1000), 4);
	uint8_t *cv = f + base + (cv_rva - 0x1000);
	memcpy(cv, "RSDS", 4);
	memcpy(cv + 24, pdb, plen);
	return mapped ? 0x3000 : 0x600;
}

int main(void)
{
	static uint8_t img[0x3000];
	struct pe_info pi;
	const char *pdb = "/build/edk2/Build/OvmfX64/DEBUG_GCC5/X64/DxeCore.debug";
	for (int mapped = 0; mapped < 2; mapped++) {
		size_t n = build_pe(img, mapped, pdb);
		int r = pe_read_info(img, n, mapped, &pi);
		char name[64];
		snprintf(name, sizeof(name), "built PE (%s): headers", mapped ? "mapped" : "file");
		CHECKF(r == 0 && pi.pe32plus && pi.machine == 0x8664 && pi.entry_rva == 0x1010 &&
			       pi.size_of_image == 0x3000 && pi.subsystem == 10 &&
			       pi.image_base == 0x140000000ull,
		       name, "r=%d", r);
		snprintf(name, sizeof(name), "built PE (%s): CodeView path", mapped ? "mapped" : "file");
		CHECKF(!strcmp(pi.debug_path, pdb), name, "'%s'", pi.debug_path);
		/* every truncation is an error or a shorter answer, never a bad read */
		unsigned bad = 0;
		for (size_t cut = 0; cut < n; cut++) {
			uint8_t *copy = malloc(cut ? cut : 1);
			memcpy(copy, img, cut);
			r = pe_read_info(copy, cut, mapped, &pi);
			if (r == 0 && pi.debug_path[0] && strcmp(pi.debug_path, pdb))
				bad++;
			free(copy);
		}
		snprintf(name, sizeof(name), "built PE (%s): every truncation", mapped ? "mapped" : "file");
		CHECKF(bad == 0, name, "%u bad results", bad);
	}
	char dn[32];
	pe_debug_name(pdb, dn, sizeof(dn));
	CHECKF(!strcmp(dn, "DxeCore"), "debug name from path", "'%s'", dn);
	pe_debug_name("C:\\src\\Shell.pdb", dn, sizeof(dn));
	CHECKF(!strcmp(dn, "Shell"), "debug name from Windows path", "'%s'", dn);

	size_t len;
	char *efi = read_small_file(NULL, "build/efipt.efi", 64u << 20, &len);
	if (CHECK(efi, "read build/efipt.efi")) {
		int r = pe_read_info((uint8_t *)efi, len, false, &pi);
		CHECKF(r == 0 && pi.pe32plus && pi.subsystem == 10 && pi.machine == 0x8664 &&
			       pi.size_of_image >= len / 2,
		       "efipt.efi: PE32+ EFI application", "r=%d subsystem=%u", r, pi.subsystem);
		free(efi);
	}

	/* hostile headers: random bytes behind a valid MZ/PE prefix */
	srand(1);
	unsigned crashes_would_show = 0;
	for (int i = 0; i < 20000; i++) {
		size_t n = 64 + (size_t)(rand() % 2048);
		uint8_t *b = malloc(n);
		for (size_t k = 0; k < n; k++)
			b[k] = (uint8_t)rand();
		b[0] = 'M';
		b[1] = 'Z';
		uint32_t pe = (uint32_t)(rand() % (int)n);
		efipt_store_le(b + 0x3c, pe, 4);
		if (pe + 4 <= n)
			memcpy(b + pe, "PE\0\0", 4);
		pe_read_info(b, n, i & 1, &pi);
		crashes_would_show += strlen(pi.debug_path) >= sizeof(pi.debug_path);
		free(b);
	}
	CHECK(crashes_would_show == 0, "random PE headers: bounded, terminated output");
	return check_exit();
}
