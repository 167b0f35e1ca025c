/*
 * The firmware's DEBUG output of a run directory (debugport.jsonl, written
 * by efipt qemu: qemu-plugin/debugport.h), as lines: each with the CPU, the
 * index in that CPU's trace of the instruction that wrote its first byte
 * (-1: written while not traced) and that instruction's address. efipt log
 * prints them; calls and timeline place them in the call trace.
 */
#ifndef EFIPT_HOST_DEBUGLOG_H
#define EFIPT_HOST_DEBUGLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define DBGLOG_CPUS 64
#define DBGLOG_TEXT 4096	/* a longer line is cut there */

struct dbglog_line {
	unsigned cpu;
	int64_t insn;		/* -1: not traced */
	uint64_t ip;
	char *text;		/* its bytes, NUL-terminated, no '\n' or trailing '\r' */
	size_t len;
};

struct dbglog {
	struct dbglog_line *v;	/* in the order the lines ended */
	size_t n, cap;
	uint64_t records;	/* of the file */
};

/*
 * Read dir/debugport.jsonl: the lines of CPU cpu (-1: every CPU). 0 read;
 * 1 no such file (*dl empty; nothing printed); -1 an unreadable file or a
 * record that is not one (printed, prefixed by cmd, with the line number).
 */
int dbglog_read(struct dbglog *dl, const char *dir, long cpu, const char *cmd);
/* The same from an open file; path names it in messages. 0 or -1. */
int dbglog_read_file(struct dbglog *dl, FILE *f, const char *path, long cpu, const char *cmd);
void dbglog_free(struct dbglog *dl);

/* "0x" and 1-16 hex digits (a 64-bit address, nothing else) into *v. */
bool dbglog_hex_address(const char *s, uint64_t *v);

/* The lines of one CPU whose instruction was traced, by index ascending:
 * a new array of pointers into dl (*n of them; NULL with *n 0 when there
 * are none, or out of memory: *oom set). */
const struct dbglog_line **dbglog_traced(const struct dbglog *dl, unsigned cpu, size_t *n,
					 bool *oom);

#endif
