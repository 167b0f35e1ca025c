/*
 * One JSON Lines record on standard output: the object compact, its keys
 * in the order they were set, then a newline.
 */
#ifndef EFIPT_HOST_JSONL_OUT_H
#define EFIPT_HOST_JSONL_OUT_H

#include <jansson.h>

/* Print o (NULL: nothing) as one line and release it. */
void jsonl_put(json_t *o);

#endif
