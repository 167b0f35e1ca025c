/* Host file helpers shared by the CLI commands. */
#ifndef EFIPT_DECODE_FILE_IO_H
#define EFIPT_DECODE_FILE_IO_H

#include <stddef.h>

/*
 * Read a whole (small) file, up to max bytes, into a malloc'd buffer with a
 * NUL appended. On failure prints "efipt: PATH: reason" to stderr and
 * returns NULL.
 */
char *read_small_file(const char *path, size_t max, size_t *len);

struct cpuid_set;
/*
 * Read a `cpuid -r -1` dump (CPU block cpu) into set. On failure prints
 * "efipt CMD: FILE:LINE: reason" to stderr and returns -1.
 */
int read_cpuid_file(const char *cmd, const char *path, unsigned cpu, struct cpuid_set *set);

/* Parse an unsigned number (decimal, or hex with 0x). Returns 0 on success. */
int parse_u64(const char *s, unsigned long long *v);

#endif
