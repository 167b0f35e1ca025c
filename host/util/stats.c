/* Input counts for tests; see stats.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/util/stats.h"

struct stats stats;

void stats_report(void)
{
	const char *e = getenv("EFIPT_STATS");
	if (e && !strcmp(e, "1"))
		fprintf(stderr, "efipt stats: manifest %u, memmap %u, images %u, decodes %u\n",
			stats.manifest, stats.memmap, stats.images, stats.decodes);
}
