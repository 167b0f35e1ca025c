/* Option tables; see opt_table.h. */
#include "core/opt_table.h"

#include <stdbool.h>

#include "core/mem.h"

/* arg is "--name" or "--name=value": the value part (or NULL) in *val. */
static bool names(const char *arg, const char *name, const char **val)
{
	if (arg[0] != '-' || arg[1] != '-')
		return false;
	arg += 2;
	size_t n = efipt_strlen(name);
	for (size_t i = 0; i < n; i++)
		if (arg[i] != name[i])
			return false;
	if (arg[n] == 0) {
		*val = 0;
		return true;
	}
	if (arg[n] == '=') {
		*val = arg + n + 1;
		return true;
	}
	return false;
}

int opt_parse(const struct opt_row *rows, size_t n, void *ctx, const char *arg, const char *next,
	      struct strbuf *err)
{
	if (!arg)
		return 0;
	for (size_t i = 0; i < n; i++) {
		const struct opt_row *r = &rows[i];
		const char *v;
		int used = 1;
		if (!names(arg, r->name, &v))
			continue;
		if (r->kind == OPT_FLAG && v) {
			sb_printf(err, "--%s takes no value", r->name);
			return -1;
		}
		if (r->kind == OPT_VALUE && !v) {
			if (!next) {
				sb_printf(err, "--%s needs a value", r->name);
				return -1;
			}
			v = next;
			used = 2;
		}
		return r->set(ctx, r, v, err) ? -1 : used;
	}
	return 0;
}

void opt_usage(const struct opt_row *rows, size_t n, struct strbuf *out)
{
	enum { COLUMN = 22 };
	for (size_t i = 0; i < n; i++) {
		const struct opt_row *r = &rows[i];
		if (!r->help)
			continue;
		size_t start = out->len;
		sb_printf(out, "  --%s", r->name);
		if (r->arg)
			sb_printf(out, "%s%s", r->arg[0] == '=' || r->arg[0] == '[' ? "" : " ", r->arg);
		size_t w = out->len - start;
		for (size_t k = w; k < COLUMN; k++)
			sb_putc(out, ' ');
		if (w >= COLUMN - 1)
			sb_puts(out, w >= COLUMN ? "  " : " ");
		for (const char *h = r->help; *h; h++) {
			sb_putc(out, *h);
			if (*h == '\n')
				for (unsigned k = 0; k < COLUMN; k++)
					sb_putc(out, ' ');
		}
		sb_putc(out, '\n');
	}
}

int opt_set_true(void *ctx, const struct opt_row *row, const char *value, struct strbuf *err)
{
	(void)value;
	(void)err;
	*(bool *)((char *)ctx + row->field) = true;
	return 0;
}
