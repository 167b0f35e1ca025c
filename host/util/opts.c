/* Option tables of the host commands; see opts.h. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "host/util/file_io.h"
#include "host/util/opts.h"

/* Short options: the one letter each stands for. */
static const struct {
	char letter;
	const char *name;
} shorts[] = { { 'o', "output" } };

static char short_for(const char *name)
{
	for (size_t i = 0; i < sizeof(shorts) / sizeof(shorts[0]); i++)
		if (!strcmp(shorts[i].name, name))
			return shorts[i].letter;
	return 0;
}

/* The row arg names ("--name" or "--name=value", without the value), as
 * getopt_long finds it: the exact name, else the one name it begins. *g
 * and *r: where; NULL when none or several (*ambiguous). */
static const struct opt_row *find(const struct opts_cmd *c, const char *arg, size_t len,
				  const struct opts_group **g, bool *ambiguous)
{
	const struct opt_row *hit = NULL;
	unsigned hits = 0;
	*ambiguous = false;
	for (size_t i = 0; i < c->ng; i++)
		for (size_t k = 0; k < c->g[i].n; k++) {
			const struct opt_row *r = &c->g[i].rows[k];
			if (strncmp(r->name, arg, len))
				continue;
			if (!r->name[len]) {
				*g = &c->g[i];
				return r; /* exact */
			}
			if (!hit || hit->set != r->set || hit->field != r->field)
				hits++; /* the same option in two groups is one */
			hit = r;
			*g = &c->g[i];
		}
	if (hits > 1) {
		*ambiguous = true;
		return NULL;
	}
	return hit;
}

static void usage_error(const struct opts_cmd *c, FILE *f)
{
	opts_help(c, f);
}

int opts_parse(const struct opts_cmd *c, int argc, char **argv, char **operand, unsigned *n)
{
	*n = 0;
	bool options = true;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!options || a[0] != '-' || !a[1]) {
			if (*n >= c->max_operands) {
				fprintf(stderr, "efipt %s: unexpected argument '%s'\n", c->name,
					term_safe(a));
				return OPTS_USAGE;
			}
			operand[(*n)++] = argv[i];
			continue;
		}
		if (!strcmp(a, "--")) {
			options = false;
			continue;
		}
		char name[64];
		const char *val = NULL;
		if (a[1] != '-') {
			/* a short option: -o FILE or -oFILE */
			size_t k = 0;
			while (k < sizeof(shorts) / sizeof(shorts[0]) && shorts[k].letter != a[1])
				k++;
			if (k == sizeof(shorts) / sizeof(shorts[0])) {
				fprintf(stderr, "efipt %s: invalid option -- '%c'\n", c->name, a[1]);
				usage_error(c, stderr);
				return OPTS_USAGE;
			}
			snprintf(name, sizeof(name), "%s", shorts[k].name);
			if (a[2])
				val = a + 2;
		} else {
			const char *eq = strchr(a + 2, '=');
			size_t len = eq ? (size_t)(eq - (a + 2)) : strlen(a + 2);
			snprintf(name, sizeof(name), "%.*s", (int)(len < 63 ? len : 63), a + 2);
			if (eq)
				val = eq + 1;
		}
		if (!strcmp(name, "help") && !val) {
			opts_help(c, stdout);
			return OPTS_HELP;
		}
		const struct opts_group *g = NULL;
		bool ambiguous;
		const struct opt_row *r = find(c, name, strlen(name), &g, &ambiguous);
		if (!r && !ambiguous && !strncmp("help", name, strlen(name)) && !val) {
			opts_help(c, stdout);
			return OPTS_HELP;
		}
		if (!r) {
			if (ambiguous)
				fprintf(stderr, "efipt %s: option '%s' is ambiguous\n", c->name,
					term_safe(a));
			else
				fprintf(stderr, "efipt %s: unrecognized option '%s'\n", c->name,
					term_safe(a));
			usage_error(c, stderr);
			return OPTS_USAGE;
		}
		if (r->kind == OPT_FLAG && val) {
			fprintf(stderr, "efipt %s: option '--%s' doesn't allow an argument\n", c->name,
				r->name);
			usage_error(c, stderr);
			return OPTS_USAGE;
		}
		if (r->kind == OPT_VALUE && !val) {
			if (i + 1 >= argc) {
				fprintf(stderr, "efipt %s: option '--%s' requires an argument\n", c->name,
					r->name);
				usage_error(c, stderr);
				return OPTS_USAGE;
			}
			val = argv[++i];
		}
		char ebuf[4400];
		struct strbuf err;
		sb_init(&err, ebuf, sizeof(ebuf));
		if (r->set(g->ctx, r, val, &err)) {
			fprintf(stderr, "efipt %s: %s\n", c->name, ebuf);
			return OPTS_USAGE;
		}
	}
	return OPTS_OK;
}

/* One row of --help: "  -o, --output FILE   help", continued lines
 * indented (core/opt_table.h's layout). */
static void help_row(const struct opt_row *r, FILE *f)
{
	enum { COLUMN = 22 };
	char head[160], letter[8] = "";
	if (short_for(r->name))
		snprintf(letter, sizeof(letter), "-%c, ", short_for(r->name));
	int w = snprintf(head, sizeof(head), "  %s--%s%s%s", letter, r->name,
			 r->arg && r->arg[0] != '=' && r->arg[0] != '[' ? " " : "", r->arg ? r->arg : "");
	if (w < 0)
		return;
	fputs(head, f);
	if (w <= COLUMN - 2) /* two spaces at least before the help */
		fprintf(f, "%*s", COLUMN - w, "");
	else
		fputs("  ", f);
	for (const char *h = r->help; *h; h++) {
		fputc(*h, f);
		if (*h == '\n')
			fprintf(f, "%*s", COLUMN, "");
	}
	fputc('\n', f);
}

void opts_help(const struct opts_cmd *c, FILE *f)
{
	fputs(c->usage, f);
	for (size_t i = 0; i < c->ng; i++) {
		const struct opts_group *g = &c->g[i];
		bool any = false;
		for (size_t k = 0; k < g->n && !any; k++)
			any = g->rows[k].help != NULL;
		if (!any)
			continue;
		if (g->title)
			fprintf(f, "%s:\n", g->title);
		for (size_t k = 0; k < g->n; k++)
			if (g->rows[k].help)
				help_row(&g->rows[k], f);
	}
	if (c->tail)
		fprintf(f, "\n%s", c->tail);
}

int opts_set_str(void *ctx, const struct opt_row *row, const char *value, struct strbuf *err)
{
	(void)err;
	*(const char **)((char *)ctx + row->field) = value;
	return 0;
}

int opts_set_u64(void *ctx, const struct opt_row *row, const char *value, struct strbuf *err)
{
	unsigned long long v;
	if (parse_u64(value, &v)) {
		sb_printf(err, "--%s takes a number, not '%s'", row->name, term_safe(value));
		return -1;
	}
	*(unsigned long long *)((char *)ctx + row->field) = v;
	return 0;
}

int opts_set_by(void *ctx, const struct opt_row *row, const char *value, struct strbuf *err)
{
	if (strcmp(value, "function") && strcmp(value, "image")) {
		sb_printf(err, "--%s takes function or image, not '%s'", row->name,
			  term_safe(value));
		return -1;
	}
	*(bool *)((char *)ctx + row->field) = !strcmp(value, "image");
	return 0;
}

int opts_set_table_format(void *ctx, const struct opt_row *row, const char *value,
			  struct strbuf *err)
{
	int f = !strcmp(value, "text") ? OPTS_FMT_TEXT : !strcmp(value, "jsonl") ? OPTS_FMT_JSONL
	      : !strcmp(value, "csv") ? OPTS_FMT_CSV : -1;
	if (f < 0) {
		sb_printf(err, "--%s takes text, jsonl or csv, not '%s'", row->name,
			  term_safe(value));
		return -1;
	}
	*(int *)((char *)ctx + row->field) = f;
	return 0;
}
