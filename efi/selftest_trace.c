/*
 * Built-in code with a known control flow for the selftest: a loop of 100
 * indirect calls through a table, 66 to st_leaf and 34 to st_other (every
 * i divisible by 3), each with a conditional branch and a return. A correct
 * trace, decoded in place, executes the first instruction of st_leaf exactly
 * 66 times and of st_other exactly 34 times, with no decode error.
 */
#include <efi.h>
#include <efilib.h>

#include "core/memview.h"
#include "core/pt_flow.h"
#include "efi/code_view.h"
#include "efi/hw_trace.h"
#include "efi/inplace.h"
#include "efi/selftest_trace.h"

#define LOOPS 100
#define EXPECT_LEAF 66
#define EXPECT_OTHER 34

typedef unsigned (*st_fn)(unsigned);

__attribute__((noinline)) static unsigned st_leaf(unsigned x)
{
	return x & 1 ? x * 3 + 1 : x / 2;
}

__attribute__((noinline)) static unsigned st_other(unsigned x)
{
	return x ^ 0x55;
}

/* volatile: the compiler must really load the target and call indirectly */
static st_fn volatile st_table[2] = { st_leaf, st_other };

__attribute__((noinline)) static EFI_STATUS st_workload(void *ctx)
{
	unsigned acc = 0;
	for (unsigned i = 0; i < LOOPS; i++)
		acc += st_table[i % 3 == 0](i);
	*(unsigned *)ctx = acc;
	return EFI_SUCCESS;
}

static unsigned st_expected(void)
{
	unsigned acc = 0;
	for (unsigned i = 0; i < LOOPS; i++)
		acc += i % 3 == 0 ? (i ^ 0x55) : (i & 1 ? i * 3 + 1 : i / 2);
	return acc;
}

struct counts {
	uint64_t leaf_ip, other_ip;
	uint64_t leaf, other, errors;
	uint64_t first_error_off;
};

static void on_run(void *ctx, const struct ptflow_run *r)
{
	struct counts *c = ctx;
	uint64_t ip = r->ip;
	for (uint32_t i = 0; i < r->ninsn; i++) {
		c->leaf += ip == c->leaf_ip;
		c->other += ip == c->other_ip;
		ip += r->lens[i];
	}
}

static void on_event(void *ctx, const struct ptflow_event *ev)
{
	struct counts *c = ctx;
	if (ev->type == PTFLOW_EV_ERROR && !c->errors++)
		c->first_error_off = ev->offset;
}

int selftest_trace_mode(const struct ptcaps *caps, enum ptcfg_output output,
			enum ptcfg_mode mode, uint64_t size, struct strbuf *detail)
{
	struct ptcfg cfg;
	ptcfg_init(&cfg);
	cfg.output = output;
	cfg.mode = mode;
	cfg.size = size;
	cfg.user = false; /* firmware runs at CPL 0 */
	cfg.cpl_set = true;
	static struct hw_result res;
	unsigned acc = 0;
	char msg[256];
	struct strbuf mb;
	sb_init(&mb, msg, sizeof(msg));
	EFI_STATUS st = hw_trace(caps, &cfg, st_workload, &acc, NULL, NULL, &res, &mb);
	if (st == EFI_UNSUPPORTED) {
		sb_puts(detail, msg);
		return -1;
	}
	if (EFI_ERROR(st)) {
		sb_printf(detail, "capture failed: %s", msg);
		if (res.buf)
			FreePool(res.buf);
		return 0;
	}
	int pass = 0;
	if (acc != st_expected()) {
		sb_puts(detail, "the traced code computed a wrong result");
	} else if (res.ext.error || res.ext.full || res.ext.wrapped) {
		sb_printf(detail, "trace %s%s%s", res.ext.error ? "Error bit set " : "",
			  res.ext.full ? "buffer full " : "", res.ext.wrapped ? "wrapped" : "");
	} else {
		static struct memview view;
		static struct memview_region regions[256];
		memview_init(&view, regions, 256);
		code_view_add_code_regions(&view);
		struct counts c = { (uint64_t)(UINTN)st_leaf, (uint64_t)(UINTN)st_other, 0, 0, 0, 0 };
		struct ptflow_sink sink = { &c, on_run, on_event };
		struct ptflow_stat stat;
		static struct ptflow_decoder dec; /* several KiB: not on the stack */
		if (EFI_ERROR(inplace_decode(res.buf, res.len, &view, caps, 0, &dec, &sink, NULL,
					     false, &stat)))
			sb_puts(detail, "no memory for the decoder");
		else if (c.errors)
			sb_printf(detail, "%llu decode errors (first at trace offset 0x%llx)",
				  (unsigned long long)c.errors, (unsigned long long)c.first_error_off);
		else if (c.leaf != EXPECT_LEAF || c.other != EXPECT_OTHER)
			sb_printf(detail, "calls seen %llu/%llu, expected %u/%u",
				  (unsigned long long)c.leaf, (unsigned long long)c.other, EXPECT_LEAF,
				  EXPECT_OTHER);
		else {
			sb_printf(detail, "%llu bytes, %llu instructions, calls %u/%u as expected",
				  (unsigned long long)res.len, (unsigned long long)stat.insns,
				  EXPECT_LEAF, EXPECT_OTHER);
			pass = 1;
		}
	}
	if (res.buf)
		FreePool(res.buf);
	return pass;
}
