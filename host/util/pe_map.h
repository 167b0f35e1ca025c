/*
 * A PE32/PE32+ file (UEFI driver, application) as the UEFI loader lays it
 * out: headers and sections at their RVAs in SizeOfImage bytes, base
 * relocations applied for where it is loaded (Microsoft PE/COFF
 * specification: optional header, section table, base relocation blocks;
 * DIR64 and HIGHLOW, the types x64 and IA-32 images carry), and so is a
 * TE file (pe_map_te). The file is untrusted: every offset and size is
 * checked before use.
 */
#ifndef EFIPT_HOST_PE_MAP_H
#define EFIPT_HOST_PE_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PE_MAP_MAX_IMAGE (512u << 20)

struct pe_mapped {
	uint8_t *img;		/* size_of_image bytes (calloc'd: free() it) */
	uint32_t size_of_image;
	uint64_t image_base;	/* the optional header's ImageBase */
	uint64_t load;		/* where img is laid out for */
	uint32_t entry_rva;
	/* the section table, in the file (valid while it is) */
	const uint8_t *sect;
	unsigned nsec;
	/* where the image's first loaded byte is: 0 (PE headers), or a TE
	 * header's RVA (StrippedSize - 40) */
	uint32_t hdr_rva;
};

/*
 * Lay out the file f[0..len) at load (relocated by load - ImageBase), or
 * at its ImageBase when !at_load. 0, or -1 with why in err (no file name:
 * the caller adds it).
 */
int pe_map(const uint8_t *f, size_t len, uint64_t load, bool at_load, struct pe_mapped *out,
	   char *err, size_t errlen);

/*
 * A TE file (PI spec vol. 1, the Terse Executable: a PE with its headers
 * up to the section table stripped, StrippedSize bytes, and a 40-byte TE
 * header in their place) as the PI loaders lay it out: the TE header kept
 * at RVA StrippedSize - 40, sections at their RVAs, base relocations (the
 * TE header's first data directory) applied for load - ImageBase. As for
 * pe_map(), img is indexed by RVA, ImageBase is where RVA 0 is, and
 * size_of_image is the end of the last section (TE has no SizeOfImage).
 */
int pe_map_te(const uint8_t *f, size_t len, uint64_t load, bool at_load, struct pe_mapped *out,
	      char *err, size_t errlen);

/* pe_map_te() for a file that starts with "VZ", else pe_map(). */
int pe_map_any(const uint8_t *f, size_t len, uint64_t load, bool at_load, struct pe_mapped *out,
	       char *err, size_t errlen);

/* Section i's header (40 bytes) of a mapped file, and whether it is code
 * (IMAGE_SCN_MEM_EXECUTE or IMAGE_SCN_CNT_CODE). */
static inline const uint8_t *pe_map_section(const struct pe_mapped *m, unsigned i)
{
	return m->sect + (size_t)i * 40;
}
bool pe_map_section_is_code(const uint8_t *h);

#endif
