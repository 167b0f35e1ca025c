/*
 * The command lines of the host commands as option tables: groups of
 * core/opt_table.h rows, each group with its own ctx and a heading, parse
 * the options and print --help, so that an option's name, value and help
 * are written once. The shared groups (the session's inputs, decoder
 * settings and symbols: host/input/session.h) give an option one meaning in
 * every command that takes it.
 *
 * As getopt_long does: options and operands in any order, "--" ends the
 * options, "--name=value" or "--name value", an unambiguous prefix of a name
 * is that option, "-o FILE" is "--output FILE"; messages name the command
 * ("efipt top: unrecognized option '--bogus'").
 */
#ifndef EFIPT_HOST_OPTS_H
#define EFIPT_HOST_OPTS_H

#include <stddef.h>
#include <stdio.h>

#include "core/opt_table.h"

struct opts_group {
	const char *title;		/* help heading ("inputs"), or NULL */
	const struct opt_row *rows;
	size_t n;
	void *ctx;			/* what the rows' set() fill */
};

struct opts_cmd {
	const char *name;		/* "top" */
	const char *usage;		/* --help before the options */
	const char *tail;		/* --help after them (exit status ...) */
	const struct opts_group *g;
	size_t ng;
	unsigned max_operands;		/* more is a usage error */
};

enum { OPTS_OK, OPTS_HELP, OPTS_USAGE };

/*
 * Parse argv[1..argc) (argv[0] is "efipt NAME"). The operands (arguments
 * that are no option) go to operand[0..*n). Returns OPTS_OK; OPTS_HELP
 * when --help was given (printed on stdout); OPTS_USAGE after a message
 * on stderr (exit status 2).
 */
int opts_parse(const struct opts_cmd *c, int argc, char **argv, char **operand, unsigned *n);

/* The whole --help text. */
void opts_help(const struct opts_cmd *c, FILE *f);

/* Setters for rows (row->field: offsetof the member in ctx). */
/* const char *: the value as given. */
int opts_set_str(void *ctx, const struct opt_row *row, const char *value, struct strbuf *err);
/* unsigned long long: a number (decimal, or hex with 0x). */
int opts_set_u64(void *ctx, const struct opt_row *row, const char *value, struct strbuf *err);
/* bool: --by function|image, true for image (top, diff). */
int opts_set_by(void *ctx, const struct opt_row *row, const char *value, struct strbuf *err);
/* int: a table's --format, OPTS_FMT_* (top, diff). */
enum { OPTS_FMT_TEXT, OPTS_FMT_JSONL, OPTS_FMT_CSV };
int opts_set_table_format(void *ctx, const struct opt_row *row, const char *value,
			  struct strbuf *err);

#endif
