/* Images loaded while traced; see load_watch.h. */
#include <efi.h>
#include <efilib.h>

#include "core/codechg.h"
#include "core/imgrec.h"
#include "core/mem.h"
#include "core/pe_info.h"
#include "core/pt_image.h"
#include "core/strbuf.h"
#include "efi/load_watch.h"
#include "efi/sideband.h"

#define MAX_LOADS 32

struct load {
	struct imgrec rec;
	uint64_t pos;
	bool pos_known;
	char why[80];		/* no position: why */
	struct pe_code code;	/* its executable ranges (one: all of it) */
	uint8_t *copy;		/* the image as loaded (pool), or NULL */
};

static struct {
	EFI_IMAGE_LOAD orig;
	loadwatch_pos_fn pos;
	struct load load[MAX_LOADS];
	unsigned n, dropped;
} w;

static void say(char *dst, const char *text)
{
	struct strbuf sb;
	sb_init(&sb, dst, 80);
	sb_puts(&sb, text);
}

static int live_read(void *ctx, uint64_t ip, uint8_t *buf, size_t n)
{
	const struct imgrec *r = ctx;
	if (ip < r->base || ip - r->base >= r->size)
		return 0;
	uint64_t left = r->size - (ip - r->base);
	size_t k = n < left ? n : (size_t)left;
	CopyMem(buf, (void *)(UINTN)ip, k);
	return (int)k;
}

/* The table changed as a whole: no event sees it half done (TPL_HIGH_LEVEL),
 * its CRC32 over the header size with the field 0 (UEFI 2.10 4.2) */
static void set_load_image(EFI_IMAGE_LOAD fn)
{
	EFI_TPL old = uefi_call_wrapper(BS->RaiseTPL, 1, TPL_HIGH_LEVEL);
	BS->LoadImage = fn;
	BS->Hdr.CRC32 = 0;
	UINT32 crc = 0;
	uefi_call_wrapper(BS->CalculateCrc32, 3, BS, BS->Hdr.HeaderSize, &crc);
	BS->Hdr.CRC32 = crc;
	uefi_call_wrapper(BS->RestoreTPL, 1, old);
}

/* The new image's record, position and code, right after it loaded. */
static void note(EFI_HANDLE h)
{
	if (w.n == MAX_LOADS) {
		w.dropped++;
		return;
	}
	EFI_LOADED_IMAGE *li = sideband_loaded_image(h);
	if (!li)
		return;
	struct load *l = &w.load[w.n];
	efipt_memset(l, 0, sizeof(*l));
	/* the position first, right after LoadImage wrote the image: every
	 * instruction from there on ran with its code in memory */
	l->pos_known = !EFI_ERROR(w.pos(&l->pos));
	if (!l->pos_known)
		say(l->why, "the trace position could not be read");
	sideband_image_record(li, &l->rec, true);
	if (!l->rec.size)
		return;
	struct ptimg img = { live_read, &l->rec };
	if (pe_code_read(&img, l->rec.base, l->rec.size, &l->code) || !l->code.n) {
		l->code.n = 1; /* no PE headers to go by: all of it */
		l->code.r[0].rva = 0;
		l->code.r[0].size = (uint32_t)(l->rec.size < 0xffffffffu ? l->rec.size : 0xffffffffu);
	}
	l->copy = AllocatePool(l->rec.size);
	if (l->copy)
		CopyMem(l->copy, (void *)(UINTN)l->rec.base, l->rec.size);
	else
		say(l->why, "no memory for a copy of its code");
	w.n++;
}

static EFI_STATUS EFIAPI watched_load(BOOLEAN boot_policy, EFI_HANDLE parent,
				      EFI_DEVICE_PATH *path, VOID *src, UINTN src_size,
				      EFI_HANDLE *out)
{
	EFI_STATUS st = uefi_call_wrapper(w.orig, 6, boot_policy, parent, path, src, src_size, out);
	if (!EFI_ERROR(st) && out && *out && w.pos)
		note(*out);
	return st;
}

void loadwatch_begin(loadwatch_pos_fn pos)
{
	if (w.orig)
		return;
	w.pos = pos;
	w.n = w.dropped = 0;
	w.orig = BS->LoadImage;
	set_load_image(watched_load);
}

void loadwatch_end(void)
{
	if (!w.orig)
		return;
	set_load_image(w.orig);
	w.orig = NULL;
	w.pos = NULL;
}

/* Records of load l: its code ranges in 16-byte pieces at its position
 * (into out, when not NULL). */
static UINTN records(const struct load *l, uint8_t *out)
{
	UINTN k = 0;
	for (unsigned i = 0; i < l->code.n; i++) {
		uint64_t rva = l->code.r[i].rva, end = rva + l->code.r[i].size;
		if (end > l->rec.size)
			end = l->rec.size;
		for (uint64_t a = rva; a < end; a += CODECHG_MAX_LEN, k++) {
			if (!out)
				continue;
			struct codechg c = { .pos = l->pos, .addr = l->rec.base + a, .cpu = 0 };
			c.by = 0;
			c.len = (uint8_t)(end - a < CODECHG_MAX_LEN ? end - a : CODECHG_MAX_LEN);
			efipt_memcpy(c.bytes, l->copy + a, c.len);
			codechg_put(out + CODECHG_HEADER + k * CODECHG_RECORD, &c);
		}
	}
	return k;
}

UINTN loadwatch_write(struct run *run, bool wrapped, uint64_t trace_len)
{
	if (!run) {
		for (unsigned i = 0; i < w.n; i++)
			if (w.load[i].copy)
				FreePool(w.load[i].copy);
		w.n = 0;
		return 0;
	}
	UINTN total = 0;
	for (unsigned i = 0; i < w.n; i++) {
		struct load *l = &w.load[i];
		if (l->pos_known && (wrapped || l->pos > trace_len)) {
			l->pos_known = false;
			say(l->why, wrapped ? "the trace wrapped: older trace was overwritten"
						      : "past the end of the trace");
		}
		if (l->pos_known && l->copy)
			total += records(l, NULL);
	}
	UINTN size = CODECHG_HEADER + total * CODECHG_RECORD;
	uint8_t *file = total ? AllocatePool(size) : NULL;
	UINTN written = 0;
	if (file) {
		codechg_header(file);
		UINTN k = 0;
		for (unsigned i = 0; i < w.n; i++)
			if (w.load[i].pos_known && w.load[i].copy)
				k += records(&w.load[i], file + k * CODECHG_RECORD);
		if (!EFI_ERROR(run_write_file(run, "codechanges.bin", file, size)))
			written = total;
		FreePool(file);
	}
	static char list[8192];
	struct strbuf sb;
	sb_init(&sb, list, sizeof(list));
	sb_putc(&sb, '[');
	for (unsigned i = 0; i < w.n; i++) {
		struct load *l = &w.load[i];
		sb_puts(&sb, i ? ", {\"image\": " : "{\"image\": ");
		imgrec_json(&l->rec, &sb);
		if (l->pos_known && l->copy && written)
			sb_printf(&sb, ", \"position\": %llu}", (unsigned long long)l->pos);
		else
			sb_printf(&sb, ", \"position\": null, \"why\": \"%s\"}",
				  l->why[0] ? l->why : "codechanges.bin could not be written");
		if (l->copy)
			FreePool(l->copy);
		l->copy = NULL;
	}
	sb_putc(&sb, ']');
	if (w.n && !sb.truncated)
		run_member(run, "loaded_while_traced", "%s", list);
	if (w.dropped)
		run_member(run, "loaded_while_traced_dropped", "%u", w.dropped);
	w.n = 0;
	return written;
}
