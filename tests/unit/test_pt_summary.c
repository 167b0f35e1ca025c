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

/* Nested and overlapping images (core/pt_image.h): an address counts for
 * the image that starts last among those holding it, by runs and by blocks
 * alike; the lookup is the same with and without the last-hit cache. */
static void check_nested_images(void)
{
	struct ptsum_image img[4] = {
		{ .base = 0x10000, .size = 0x10000, .name = "Outer" },
		{ .base = 0x12000, .size = 0x1000, .name = "Inner" },
		{ .base = 0x10000, .size = 0x100, .name = "Head" },	/* same base, smaller */
		{ .base = 0x1f000, .size = 0x2000, .name = "Tail" },	/* crosses Outer's end */
	};
	struct ptsum s;
	ptsum_init(&s, img, 4);
	CHECK(s.overlap, "ptsum_init: overlapping images found");
	CHECK(!strcmp(img[0].name, "Outer") && !strcmp(img[1].name, "Head"),
	      "of two images at one base the smaller sorts last (it owns the overlap)");
	uint8_t lens[16];
	memset(lens, 0x20, sizeof(lens));
	/* 16 instructions of 32 bytes from 0x11f00: 8 in Outer, 8 in Inner */
	struct ptflow_run r = { .ip = 0x11f00, .lens = lens, .ninsn = 16 };
	ptsum_on_run(&s, &r);
	r.ip = 0x12f80; /* 4 in Inner, 12 in Outer again */
	ptsum_on_run(&s, &r);
	r.ip = 0x10000; /* 8 in Head, 8 in Outer */
	ptsum_on_run(&s, &r);
	r.ip = 0x1ff00; /* all in Tail: it starts inside Outer, after it */
	ptsum_on_run(&s, &r);
	uint64_t outer = 8 + 12 + 8, inner = 8 + 4, head = 8, tail = 16;
	CHECKF(img[0].insns == outer && img[1].insns == head && img[2].insns == inner &&
		       img[3].insns == tail && s.outside == 0,
	       "runs: a nested image owns its range, the outer image the rest",
	       "Outer=%llu Head=%llu Inner=%llu Tail=%llu outside=%llu",
	       (unsigned long long)img[0].insns, (unsigned long long)img[1].insns,
	       (unsigned long long)img[2].insns, (unsigned long long)img[3].insns,
	       (unsigned long long)s.outside);
	/* every address against the rule, written out: the owner is the
	 * holder with the highest base (then the smaller) */
	int bad = 0;
	for (uint64_t a = 0xf000; a < 0x22000 && bad < 3; a += 0x40) {
		int want = -1;
		for (unsigned k = 0; k < 4; k++)
			if (a - img[k].base < img[k].size &&
			    (want < 0 || img[k].base > img[want].base ||
			     (img[k].base == img[want].base && img[k].size < img[want].size)))
				want = (int)k;
		unsigned cold = 99;
		uint64_t lo, hi;
		int got = ptimg_list_find(img, 4, sizeof(*img), a, &s.last, s.overlap);
		int got2 = ptimg_list_find(img, 4, sizeof(*img), a, &cold, s.overlap);
		int got3 = ptimg_list_span(img, 4, sizeof(*img), a, &cold, s.overlap, &lo, &hi);
		if (got != want || got2 != want || got3 != want || a < lo || a > hi)
			bad++;
		/* the span holds only addresses with the same answer */
		for (uint64_t b = lo; b <= hi && b < 0x22000 && !bad; b += 0x10)
			if (ptimg_list_find(img, 4, sizeof(*img), b, &cold, s.overlap) != want)
				bad++;
	}
	CHECK(!bad, "ptimg_list_find/span: the owner of every address by the rule");
	/* blocks wholly inside one stretch are counted without their lengths */
	struct ptflow_blk b[5] = {
		{ .ip = 0x11000, .size = 0x40, .ninsn = 3 },	/* Outer */
		{ .ip = 0x12000, .size = 0x40, .ninsn = 5 },	/* Inner */
		{ .ip = 0x13000, .size = 0x40, .ninsn = 7 },	/* Outer, after Inner */
		{ .ip = 0x12800, .size = 0x40, .ninsn = 11 },	/* Inner again */
		{ .ip = 0x10010, .size = 0x10, .ninsn = 13 },	/* Head */
	};
	for (unsigned k = 0; k < 4; k++)
		img[k].insns = 0;
	struct ptflow_batch batch = { b, 5, false, 0, 0, NULL, NULL, NULL, 0 };
	ptsum_on_blocks(&s, &batch);
	CHECKF(img[0].insns == 10 && img[2].insns == 16 && img[1].insns == 13,
	       "blocks: a nested image owns its range, the outer image the rest",
	       "Outer=%llu Inner=%llu Head=%llu", (unsigned long long)img[0].insns,
	       (unsigned long long)img[2].insns, (unsigned long long)img[1].insns);
	unsigned i = 0, j = 0, pairs = 0, inside = 0;
	while (ptimg_list_overlap_next(img, 4, sizeof(*img), &i, &j)) {
		pairs++;
		inside += ptimg_inside(ptimg_list_at(img, sizeof(*img), i),
				       ptimg_list_at(img, sizeof(*img), j));
	}
	CHECKF(pairs == 3 && inside == 2, "overlapping pairs: Head and Inner inside, Tail across",
	       "pairs=%u inside=%u", pairs, inside);
	struct ptsum_image apart[2] = { { .base = 0x1000, .size = 0x1000 },
					{ .base = 0x2000, .size = 0x1000 } };
	CHECK(!ptimg_list_sort(apart, 2, sizeof(*apart)), "adjacent images do not overlap");
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
	check_nested_images();
	return check_exit();
}
