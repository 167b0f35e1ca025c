/* The decode summary: attribution of instruction runs to images, ordering,
 * and the text both efipt.efi and `efipt decode` print. */
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/pt_summary.h"

/* An image whose base + size runs past 2^64 (a hostile images.json, a bad
 * ImageSize) once made ptsum_on_run spin: it must end, and count each
 * instruction once. */
static void check_wrapping_images(void)
{
	alarm(20); /* a spinning loop fails the test instead of hanging it */
	CHECK(ptimg_range_ok(0, ~0ull) && ptimg_range_ok(0xfffffffffffff000ull, 0x1000) &&
		      !ptimg_range_ok(0xfffffffffffff000ull, 0x1001) && ptimg_range_ok(5, 0),
	      "ptimg_range_ok: ranges up to 2^64 fit, beyond do not");
	struct ptsum_image img[2] = {
		{ .base = 0xfffffffffffff000ull, .size = 0x2000, .name = "wraps" },
		{ .base = 0x1000, .size = 0x1000, .name = "low" },
	};
	struct ptsum s;
	ptsum_init(&s, img, 2);
	CHECK(img[1].base == 0xfffffffffffff000ull && img[1].size == 0,
	      "ptsum_init: an image past 2^64 holds nothing");
	uint8_t lens[4] = { 4, 4, 4, 4 };
	struct ptflow_run r = { .ip = 0xfffffffffffffff0ull, .lens = lens, .ninsn = 4 };
	ptsum_on_run(&s, &r);
	CHECKF(s.insns == 4 && s.outside == 4 && img[0].insns == 0, "ptsum: run at the top of memory ends",
	       "insns=%llu outside=%llu", (unsigned long long)s.insns,
	       (unsigned long long)s.outside);

	/* the loop itself: an image that reaches 2^64 exactly, and one whose size
	 * was set after ptsum_init (the caller owns the array) */
	img[1].size = 0x1000; /* [2^64 - 4096, 2^64) */
	r.ip = 0xfffffffffffffff8ull; /* two in the image, then ip wraps to 0 */
	ptsum_on_run(&s, &r);
	CHECKF(img[1].insns == 2 && s.outside == 6, "ptsum: image ending at 2^64",
	       "top=%llu outside=%llu", (unsigned long long)img[1].insns,
	       (unsigned long long)s.outside);
	img[1].size = 0x2000; /* as a caller could leave it: base + size wraps */
	r.ip = 0xfffffffffffffff0ull;
	ptsum_on_run(&s, &r);
	CHECKF(s.insns == 12 && img[1].insns + s.outside + img[0].insns == 12,
	       "ptsum: a wrapping range after init cannot make the loop spin",
	       "insns=%llu", (unsigned long long)s.insns);
	alarm(0);
}

int main(void)
{
	struct ptsum_image img[3] = {
		{ .base = 0x3000, .size = 0x1000, .name = "C" },
		{ .base = 0x1000, .size = 0x1000, .name = "A" },
		{ .base = 0x2000, .size = 0x1000, .name = "B" },
	};
	struct ptsum s;
	ptsum_init(&s, img, 3);
	CHECK(img[0].base == 0x1000 && img[2].base == 0x3000, "images sorted by base");
	uint8_t lens[8] = { 4, 4, 4, 4, 4, 4, 4, 4 };
	/* 8 insns from 0x1ff0: 4 in A (0x1ff0..0x1ffc), 4 in B */
	struct ptflow_run r = { .ip = 0x1ff0, .lens = lens, .ninsn = 8 };
	ptsum_on_run(&s, &r);
	/* 3 insns at the end of C, then 2 at its start */
	struct ptflow_run r2 = { .ip = 0x4000 - 12, .lens = lens, .ninsn = 3 };
	ptsum_on_run(&s, &r2);
	struct ptflow_run r3 = { .ip = 0x3000, .lens = lens, .ninsn = 2 };
	ptsum_on_run(&s, &r3);
	r2.ip = 0x900; /* below every image */
	r2.ninsn = 1;
	ptsum_on_run(&s, &r2);
	CHECKF(img[0].insns == 4 && img[1].insns == 4 && img[2].insns == 5 && s.outside == 1 &&
		       s.insns == 14,
	       "runs split across image boundaries", "A=%llu B=%llu C=%llu out=%llu",
	       (unsigned long long)img[0].insns, (unsigned long long)img[1].insns,
	       (unsigned long long)img[2].insns, (unsigned long long)s.outside);
	struct ptflow_event ev = { .type = PTFLOW_EV_ERROR, .offset = 0x40, .msg = "no code" };
	ptsum_on_event(&s, &ev);
	ev.msg = "later";
	ptsum_on_event(&s, &ev);
	ev.type = PTFLOW_EV_ENABLED;
	ptsum_on_event(&s, &ev);
	struct ptflow_stat st = { .insns = 14, .branches = 3, .events = 3, .errors = 2, .packets = 9 };
	char buf[2048];
	struct strbuf sb;
	sb_init(&sb, buf, sizeof(buf));
	ptsum_format(&s, &st, 10, &sb);
	const char *want = "Instructions  14\n"
			   "Branches      3\n"
			   "Packets       9\n"
			   "Events        3 (enabled 1, disabled 0, interrupts 0, overflows 0, mode changes 0)\n"
			   "Errors        2 (first at trace offset 0x40: no code)\n"
			   "Top images by instructions:\n"
			   "             5   35.7%  C (0x3000)\n"
			   "             4   28.6%  A (0x1000)\n"
			   "             4   28.6%  B (0x2000)\n"
			   "             1    7.1%  (outside every listed image)\n";
	CHECKF(!strcmp(buf, want), "summary text", "got:\n%s", buf);
	sb_reset(&sb);
	ptsum_format(&s, &st, 1, &sb);
	CHECK(strstr(buf, "C (0x3000)") && !strstr(buf, "A (0x1000)"), "top N limits the list");
	check_wrapping_images();
	return check_exit();
}
