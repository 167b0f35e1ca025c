/*
 * libFuzzer target for the firmware's boot-performance tables (fpdt.bin):
 * core/fpdt.c's walk over an exact-size heap copy (any read outside it is
 * caught), then host/input/fpdt_run.c's pairing into spans, whose every
 * span must lie in what the records said (an end never before its start).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "host/input/fpdt_run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	struct fpdt_run f;
	memset(&f, 0, sizeof(f));
	if (!fpdtrun_parse(&f, copy, size, NULL)) {
		for (size_t i = 0; i < f.nspan; i++) {
			if (f.span[i].start + f.span[i].dur < f.span[i].start)
				abort(); /* a span past 2^64: its end was before its start */
			if (i && f.span[i].start < f.span[i - 1].start)
				abort(); /* not sorted */
		}
	}
	fpdtrun_free(&f);
	free(copy);
	return 0;
}
