/*
 * Frame names of folded stacks ("image`func;image`callee COUNT"), as efipt
 * flame and efipt diff --folded print them: the separators of the format
 * (';', newline) replaced, control characters escaped (term_safe()).
 */
#ifndef EFIPT_HOST_STACK_FOLDED_H
#define EFIPT_HOST_STACK_FOLDED_H

#include <stddef.h>
#include <stdint.h>

#include "host/symbols/symtab.h"

/* Function fn's frame name into buf (cap bytes). */
void folded_frame_name(const struct symtab *st, uint32_t fn, char *buf, size_t cap);

#endif
