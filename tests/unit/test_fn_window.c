/*
 * host/stack/fn_window: --from/--to WHERE as every command reads it, and
 * why a window holds nothing as every command says it. An index is decimal
 * or 0x hex (never octal: a firmware engineer's 010 is ten), a sign or a
 * number past 2^64 is neither an index nor a name, and an EDK2 image's name
 * may begin with a digit (8254TimerDxe).
 */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "host/stack/fn_window.h"

static void index_is(const char *v, uint64_t want)
{
	struct fnwin_where w;
	int r = fnwin_parse(v, &w);
	CHECKF(!r && w.set && !w.is_fn && w.index == want, v, "'%s': rc %d, is_fn %d, index %llu",
	       v, r, w.is_fn, (unsigned long long)w.index);
}

static void function_is(const char *v)
{
	struct fnwin_where w;
	int r = fnwin_parse(v, &w);
	CHECKF(!r && w.set && w.is_fn && w.fn == v, v, "'%s': rc %d, is_fn %d", v, r, w.is_fn);
}

static void refused(const char *v)
{
	struct fnwin_where w;
	CHECKF(fnwin_parse(v, &w) == -1, v, "'%s' taken", v);
}

int main(void)
{
	index_is("0", 0);
	index_is("10000000", 10000000);
	index_is("010", 10);
	index_is("0x10", 16);
	index_is("0XfF", 255);
	index_is("18446744073709551615", UINT64_MAX);
	function_is("CoreStartImage");
	function_is("DxeCore`CoreStartImage");
	function_is("8254TimerDxe`TimerDriverInitialize");
	function_is("_ModuleEntryPoint");
	refused("");
	refused("-1");
	refused("+5");
	refused("12abc");
	refused("0x");
	refused("0x-5");
	refused("0x 5");
	refused("18446744073709551616");
	refused("99999999999999999999999");
	refused("1 ");

	/* why a window is empty, as calls, timeline, top and flame say it */
	struct fnwin_where none = { 0 }, at5 = { true, false, 5, NULL };
	struct fnwin_where past = { true, false, 1000, NULL };
	struct fnwin_where f = { true, true, 0, "Foo" }, g = { true, true, 0, "Bar" };
	char why[300];
	CHECK(!fnwin_why_empty(&none, &none, true, 0, false, 100, why, sizeof(why)),
	      "the whole trace holds something");
	CHECK(fnwin_why_empty(&past, &none, false, 0, false, 100, why, sizeof(why)) &&
		      !strcmp(why, "--from 1000: the trace ends before it (the window never opened)"),
	      "--from past the end");
	CHECK(fnwin_why_empty(&f, &none, false, 0, false, 100, why, sizeof(why)) &&
		      !strcmp(why, "--from Foo: it never ran in the trace (the window never opened)"),
	      "--from a function that never ran");
	CHECK(fnwin_why_empty(&f, &at5, false, 0, false, 100, why, sizeof(why)) &&
		      !strcmp(why, "--from Foo: it did not run before --to 5 (the window is empty)"),
	      "--from a function that did not run before --to's index");
	CHECK(fnwin_why_empty(&f, &g, true, 7, false, 100, why, sizeof(why)) &&
		      !strcmp(why, "--to Bar: it never ran in the trace after the window opened (the "
				   "window never closed)"),
	      "--to a function that never ran after the window opened");
	CHECK(!fnwin_why_empty(&f, &g, true, 7, true, 100, why, sizeof(why)),
	      "a window a function opened and one closed holds something");
	CHECK(fnwin_why_empty(&f, &at5, true, 9, false, 100, why, sizeof(why)) &&
		      !strcmp(why, "--from Foo: it first ran at instruction 9, not before --to 5 (the "
				   "window is empty)"),
	      "--from a function that first ran after --to's index");
	CHECK(!fnwin_why_empty(&f, &at5, true, 3, false, 100, why, sizeof(why)),
	      "--from a function that ran before --to's index holds something");
	return check_exit();
}
