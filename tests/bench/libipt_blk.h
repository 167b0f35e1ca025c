/*
 * libipt's block decoder over a whole trace, as the benchmarks run it side
 * by side with efipt: every block's instructions counted, events read and
 * dropped, decoding resumed at the next PSB after an error. Header-only, so
 * each benchmark program stays one source file.
 */
#ifndef EFIPT_BENCH_LIBIPT_BLK_H
#define EFIPT_BENCH_LIBIPT_BLK_H

#include <stddef.h>
#include <stdint.h>

#include <intel-pt.h>

/* Instructions decoded; *errors decode errors, *blocks non-empty blocks. */
static inline uint64_t libipt_blk_count(struct pt_image *image, uint8_t *buf, size_t size,
					uint64_t *errors, uint64_t *blocks)
{
	struct pt_config cfg;
	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + size;
	struct pt_block_decoder *d = pt_blk_alloc_decoder(&cfg);
	pt_blk_set_image(d, image);
	uint64_t n = 0;
	*errors = *blocks = 0;
	for (;;) {
		int st = pt_blk_sync_forward(d);
		if (st < 0)
			break;
		for (;;) {
			while (st & pts_event_pending) {
				struct pt_event ev;
				st = pt_blk_event(d, &ev, sizeof(ev));
				if (st < 0)
					break;
			}
			if (st < 0)
				break;
			struct pt_block blk;
			st = pt_blk_next(d, &blk, sizeof(blk));
			n += blk.ninsn;
			*blocks += blk.ninsn != 0;
			if (st < 0)
				break;
		}
		if (st == -pte_eos)
			break;
		++*errors;
	}
	pt_blk_free_decoder(d);
	return n;
}

#endif
