/* JSON Lines records; see jsonl_out.h. */
#include <stdio.h>
#include <stdlib.h>

#include "host/out/jsonl_out.h"

void jsonl_put(json_t *o)
{
	char *s = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	if (s)
		puts(s);
	free(s);
	json_decref(o);
}
