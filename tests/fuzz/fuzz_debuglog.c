/*
 * libFuzzer target for a run directory's debugport.jsonl (the firmware's
 * DEBUG output under efipt qemu): host/input/debuglog.c's reader over the
 * input as a file. What it accepts must be lines without '\n', of known
 * CPUs, each its own length, and each CPU's traced lines in instruction
 * order.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/input/debuglog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	FILE *f = size ? fmemopen(copy, size, "r") : NULL;
	if (!f) {
		free(copy);
		return 0;
	}
	/* the reader reports rejected records on stderr: quiet here */
	static FILE *quiet;
	if (!quiet)
		quiet = fopen("/dev/null", "w");
	FILE *err = stderr;
	if (quiet)
		stderr = quiet;
	struct dbglog dl;
	long cpu = (long)(data[0] % 3) - 1; /* every CPU, 0 or 1 */
	int rc = dbglog_read_file(&dl, f, "debugport.jsonl", cpu, "fuzz");
	stderr = err;
	fclose(f);
	if (rc == 0) {
		for (size_t i = 0; i < dl.n; i++) {
			const struct dbglog_line *l = &dl.v[i];
			if (l->cpu >= DBGLOG_CPUS || (cpu >= 0 && l->cpu != (unsigned long)cpu) ||
			    l->insn < -1 || !l->text || strlen(l->text) != l->len ||
			    l->len >= DBGLOG_TEXT || memchr(l->text, '\n', l->len))
				abort();
		}
		for (unsigned c = 0; c < 2; c++) {
			size_t n = 0;
			bool oom = false;
			const struct dbglog_line **t = dbglog_traced(&dl, c, &n, &oom);
			for (size_t i = 0; i < n; i++)
				if (t[i]->cpu != c || t[i]->insn < 0 || (i && t[i]->insn < t[i - 1]->insn))
					abort();
			free(t);
		}
		dbglog_free(&dl);
	} else if (rc != -1 || dl.n || dl.v) {
		abort(); /* a refusal leaves nothing behind */
	}
	free(copy);
	return 0;
}
