/*
 * Command-line options as a table: one row per option with its name, what
 * kind of value it takes and the function that applies it. The same rows
 * parse the command line and print the usage, so an option's name is written
 * once. Used by the trace options (core/pt_config.c) and efipt.efi trace.
 */
#ifndef EFIPT_CORE_OPT_TABLE_H
#define EFIPT_CORE_OPT_TABLE_H

#include <stddef.h>

#include "core/strbuf.h"

enum opt_kind {
	OPT_FLAG,	/* --name */
	OPT_VALUE,	/* --name VALUE or --name=VALUE */
	OPT_OPTIONAL,	/* --name or --name=VALUE */
};

struct opt_row {
	const char *name;	/* without the leading "--" */
	enum opt_kind kind;
	/* Apply the option to ctx; value is NULL when none was given. Returns
	 * 0, or -1 with the reason (naming "--name") in err. */
	int (*set)(void *ctx, const struct opt_row *row, const char *value, struct strbuf *err);
	size_t field;		/* for set: offsetof the member it sets, if any */
	const char *arg;	/* usage: what follows the name ("N", "[=F]"), or NULL */
	const char *help;	/* usage: each '\n' continues on an indented line */
};

/*
 * Parse arg ("--name" or "--name=value"; next is the argument after it, or
 * NULL) against rows[0..n). Returns the number of arguments used (1 or 2),
 * 0 if no row names arg, or -1 with the reason in err.
 */
int opt_parse(const struct opt_row *rows, size_t n, void *ctx, const char *arg, const char *next,
	      struct strbuf *err);

/* One usage line per row (rows without help are left out). */
void opt_usage(const struct opt_row *rows, size_t n, struct strbuf *out);

/* A setter for OPT_FLAG rows: sets the bool at row->field in ctx. */
int opt_set_true(void *ctx, const struct opt_row *row, const char *value, struct strbuf *err);

#endif
