/* core/fpdt.c and host/input/fpdt_run.c on tables built here byte by byte
 * from the ACPI specification's layouts (5.2.24) and EDK2's extended
 * records: every field read back, start and end records paired into spans,
 * and damaged tables and records named (offset, type, length) and skipped;
 * every cut of a good file parses without reading outside it (the
 * sanitized build checks that). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/fpdt.h"
#include "host/input/fpdt_run.h"
#include "host/input/image.h"

static uint8_t buf[4096];
static size_t len;

static void put(uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		buf[len++] = (uint8_t)(v >> (8 * i));
}

static void put_bytes(const void *p, size_t n)
{
	if (n)
		memcpy(buf + len, p, n);
	len += n;
}

/* EFI_GUID {0x11223344, 0x5566, 0x7788, {0x99, 0xaa, ...}} as bytes */
static const uint8_t GA[16] = { 0x44, 0x33, 0x22, 0x11, 0x66, 0x55, 0x88, 0x77,
				0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x00 };
static const uint8_t GB[16] = { 1, 0, 0, 0, 2, 0, 3, 0, 4, 5, 6, 7, 8, 9, 10, 11 };

static size_t table_start(const char *sig, unsigned hdr)
{
	size_t at = len;
	put_bytes(sig, 4);
	put(0, 4); /* length, set by table_end */
	for (unsigned i = 8; i < hdr; i++)
		put(0, 1);
	return at;
}

static void table_end(size_t at)
{
	uint32_t n = (uint32_t)(len - at);
	for (unsigned i = 0; i < 4; i++)
		buf[at + 4 + i] = (uint8_t)(n >> (8 * i));
}

/* An EDK2 event record: header, ProgressID, ApicID, Timestamp, GUID, then
 * extra bytes. */
static void event(uint16_t type, uint16_t id, uint64_t ts, const uint8_t g[16], const void *extra,
		  size_t nextra)
{
	put(type, 2);
	put(34 + nextra, 1);
	put(1, 1);
	put(id, 2);
	put(0, 4);
	put(ts, 8);
	put_bytes(g, 16);
	put_bytes(extra, nextra);
}

static void name24(char out[24], const char *s)
{
	memset(out, 0, 24);
	memcpy(out, s, strlen(s));
}

/* FPDT (two pointers), FBPT (basic boot and EDK2 records), S3PT */
static void build_good(void)
{
	len = 0;
	size_t t = table_start("FPDT", 36);
	put(0, 2), put(16, 1), put(1, 1), put(0, 4), put(0x7000000, 8);
	put(1, 2), put(16, 1), put(1, 1), put(0, 4), put(0x7100000, 8);
	table_end(t);
	t = table_start("FBPT", 8);
	put(2, 2), put(48, 1), put(2, 1), put(0, 4);
	put(1000, 8), put(900000, 8), put(910000, 8), put(950000, 8), put(960000, 8);
	char n[24], qs[8 + 24], dg[16 + 24];
	event(0x1010, 0x01, 100000, GA, NULL, 0);	/* StartImage A */
	event(0x1010, 0x01, 400000, GB, NULL, 0);	/* StartImage B */
	name24(n, "InitThing");
	event(0x1011, 0x30, 410000, GB, n, 24);
	event(0x1011, 0x31, 420000, GB, n, 24);
	event(0x1010, 0x02, 300000, GA, NULL, 0);	/* A's end before B's: pairs by GUID */
	event(0x1010, 0x02, 450000, GB, NULL, 0);
	memset(qs, 0, sizeof(qs));
	qs[0] = 0x34, qs[1] = 0x12;
	name24(qs + 8, "PciBusDxe");
	event(0x1014, 0x05, 500000, GA, qs, sizeof(qs));
	event(0x1014, 0x06, 520000, GA, qs, sizeof(qs));
	memcpy(dg, GB, 16);
	name24(dg + 16, "OnReady");
	event(0x1012, 0x20, 600000, GA, dg, sizeof(dg));
	event(0x1012, 0x21, 601000, GA, dg, sizeof(dg));
	name24(n, "Mark");
	event(0x1011, 0x00, 700000, GA, n, 24);
	uint64_t q = 7;
	event(0x1013, 0x03, 80000, GA, &q, 8);		/* LoadImage A */
	event(0x1013, 0x04, 90000, GA, &q, 8);
	name24(n, "DXE");	/* a phase: begun by one module, ended by another */
	event(0x1011, 0x50, 50000, GA, n, 24);
	event(0x1011, 0x51, 950000, GB, n, 24);
	table_end(t);
	t = table_start("S3PT", 8);
	put(0, 2), put(24, 1), put(1, 1), put(3, 4), put(2000, 8), put(1500, 8);
	put(1, 2), put(20, 1), put(1, 1), put(10, 8), put(20, 8);
	table_end(t);
}

struct seen {
	struct fpdt_rec r[64];
	unsigned n, tables, damaged;
	uint64_t dmg_off[8];
	uint32_t dmg_type[8], dmg_len[8];
};

static void s_table(void *ctx, uint32_t sig, uint64_t off, uint32_t l)
{
	(void)sig, (void)off, (void)l;
	((struct seen *)ctx)->tables++;
}

static void s_rec(void *ctx, const struct fpdt_rec *r)
{
	struct seen *s = ctx;
	if (s->n < 64)
		s->r[s->n++] = *r;
}

static void s_dmg(void *ctx, uint64_t off, uint32_t type, uint32_t l, const char *why)
{
	(void)why;
	struct seen *s = ctx;
	if (s->damaged < 8) {
		s->dmg_off[s->damaged] = off;
		s->dmg_type[s->damaged] = type;
		s->dmg_len[s->damaged] = l;
	}
	s->damaged++;
}

static struct seen *walk(void)
{
	static struct seen s;
	memset(&s, 0, sizeof(s));
	struct fpdt_sink k = { s_table, s_rec, s_dmg, &s };
	fpdt_walk(buf, len, &k);
	return &s;
}

static const struct fpdt_span *span(const struct fpdt_run *f, const char *what, const char *name)
{
	for (size_t i = 0; i < f->nspan; i++)
		if (!strcmp(f->span[i].what, what) && !strcmp(f->span[i].name, name))
			return &f->span[i];
	return NULL;
}

static void test_good(void)
{
	build_good();
	struct seen *s = walk();
	CHECK(s->tables == 3 && s->damaged == 0, "good: three tables, nothing damaged");
	CHECK(s->n == 2 + 1 + 15 + 2, "good: every record read");
	CHECK(s->r[0].kind == FPDT_K_TABLE_PTR && s->r[0].addr == 0x7000000 &&
	      s->r[1].type == FPDT_T_S3PT_PTR && s->r[1].addr == 0x7100000,
	      "good: FPDT's FBPT and S3PT pointers");
	const struct fpdt_rec *b = &s->r[2];
	CHECK(b->kind == FPDT_K_BASIC_BOOT && b->boot[FPDT_RESET_END] == 1000 &&
	      b->boot[FPDT_LOADER_LOAD] == 900000 && b->boot[FPDT_LOADER_START] == 910000 &&
	      b->boot[FPDT_EBS_ENTRY] == 950000 && b->boot[FPDT_EBS_EXIT] == 960000,
	      "good: the basic boot record's five times");
	const struct fpdt_rec *e = &s->r[3];
	CHECK(e->kind == FPDT_K_EVENT && e->progress == 1 && e->ts == 100000 &&
	      !memcmp(e->guid, GA, 16) && !e->name[0], "good: GUID event fields");
	char g[37];
	fpdt_guid_text(GA, g);
	CHECK(!strcmp(g, "11223344-5566-7788-99aa-bbccddeeff00"), "GUID text in EFI_GUID order");
	CHECK(!strcmp(s->r[5].name, "InitThing") && s->r[5].progress == 0x30,
	      "good: string event's name");
	CHECK(s->r[9].has_qword && s->r[9].qword == 0x1234 && !strcmp(s->r[9].name, "PciBusDxe"),
	      "good: GUID qword string event");
	CHECK(s->r[11].has_guid2 && !memcmp(s->r[11].guid2, GB, 16) &&
	      !strcmp(s->r[11].name, "OnReady"), "good: dual GUID string event");
	CHECK(s->r[14].has_qword && s->r[14].qword == 7 && s->r[14].type == FPDT_T_GUID_QWORD,
	      "good: GUID qword event");
	CHECK(s->r[18].kind == FPDT_K_S3_RESUME && s->r[18].count == 3 && s->r[18].s3[0] == 2000 &&
	      s->r[18].s3[1] == 1500 && s->r[19].kind == FPDT_K_S3_SUSPEND &&
	      s->r[19].s3[0] == 10 && s->r[19].s3[1] == 20, "good: S3 resume and suspend");

	struct image_list il = { 0 };
	struct image *im = image_list_add(&il);
	snprintf(im->name, sizeof(im->name), "PcdDxe");
	snprintf(im->guid, sizeof(im->guid), "11223344-5566-7788-99AA-BBCCDDEEFF00");
	struct fpdt_run f;
	memset(&f, 0, sizeof(f));
	CHECK(fpdtrun_parse(&f, buf, len, &il) == 0, "spans: parsed");
	CHECK(f.tables == 3 && !strcmp(f.table_names, "FPDT FBPT S3PT") && f.have_boot &&
	      f.boot[FPDT_EBS_EXIT] == 960000 && f.have_s3[0] && f.have_s3[1],
	      "spans: tables, basic boot, S3");
	const struct fpdt_span *a = span(&f, "StartImage", "PcdDxe");
	CHECK(a && a->start == 100000 && a->dur == 200000 && !strcmp(a->image, "PcdDxe"),
	      "spans: StartImage of A named by its image's GUID, its end before B's matched by GUID");
	char gb[37];
	fpdt_guid_text(GB, gb);
	const struct fpdt_span *bb = span(&f, "StartImage", gb);
	CHECK(bb && bb->start == 400000 && bb->dur == 50000 && !bb->image[0],
	      "spans: StartImage of B (no image: named by GUID)");
	const struct fpdt_span *fn = span(&f, "Function", "InitThing");
	CHECK(fn && fn->dur == 10000, "spans: Function by its string");
	CHECK(span(&f, "DB:Start", "PciBusDxe") && span(&f, "DB:Start", "PciBusDxe")->dur == 20000,
	      "spans: DB:Start");
	CHECK(span(&f, "Callback", "OnReady") && span(&f, "Callback", "OnReady")->dur == 1000,
	      "spans: Callback");
	const struct fpdt_span *mk = span(&f, "Event", "Mark");
	CHECK(mk && mk->single && mk->dur == 0 && mk->start == 700000, "spans: a single event");
	CHECK(span(&f, "LoadImage", "PcdDxe") && span(&f, "LoadImage", "PcdDxe")->dur == 10000,
	      "spans: LoadImage");
	const struct fpdt_span *ph = span(&f, "CrossModule", "DXE");
	CHECK(ph && ph->start == 50000 && ph->dur == 900000,
	      "spans: a cross-module phase pairs by its string, its end in another module");
	CHECK(f.nspan == 8 && f.unpaired == 0 && f.ndamage == 0, "spans: eight, none unpaired");
	int sorted = 1;
	for (size_t i = 1; i < f.nspan; i++)
		sorted &= f.span[i - 1].start <= f.span[i].start;
	CHECK(sorted, "spans: sorted by start");
	fpdtrun_free(&f);
	image_list_free(&il);
}

static void test_damaged(void)
{
	/* a record of length 2 (below its header) ends its table's walk */
	build_good();
	size_t fbpt = 36 + 32;
	size_t rec = fbpt + 8 + 48; /* the first GUID event */
	buf[rec + 2] = 2;
	struct seen *s = walk();
	CHECK(s->damaged == 1 && s->dmg_off[0] == rec && s->dmg_type[0] == 0x1010 &&
	      s->dmg_len[0] == 2 && s->tables == 3 && s->n == 2 + 1 + 2,
	      "damaged: record length below the header named (offset, type, length), the "
	      "next table still read");

	/* a known record shorter than its fields: skipped, the next one read */
	build_good();
	buf[fbpt + 8 + 2] = 40; /* basic boot of 40 bytes: the rest shifts */
	s = walk();
	CHECK(s->damaged >= 1 && s->dmg_off[0] == fbpt + 8 && s->dmg_type[0] == 2 &&
	      s->dmg_len[0] == 40, "damaged: basic boot record shorter than its fields");

	/* a record that passes its table's end */
	build_good();
	size_t last = fbpt + 8 + 48 + 34 * 2 + 58 * 2 + 34 * 2 + 66 * 2 + 74 * 2 + 58 + 42;
	buf[last + 2] = 200;
	s = walk();
	CHECK(s->damaged == 1 && s->dmg_off[0] == last && s->dmg_len[0] == 200 &&
	      s->tables == 3, "damaged: a record past its table's end");

	/* a table whose length passes the file: named, the walk resyncs on S3PT */
	build_good();
	buf[fbpt + 4] = 0xff, buf[fbpt + 5] = 0xff;
	s = walk();
	CHECK(s->damaged == 1 && s->dmg_off[0] == fbpt && s->dmg_type[0] == 0xffffffffu &&
	      s->tables == 2, "damaged: a table past the file's end, the next table found");

	/* a table shorter than its header */
	build_good();
	buf[4] = 10;
	s = walk();
	CHECK(s->damaged == 1 && s->dmg_off[0] == 0 && s->dmg_len[0] == 10 && s->tables == 2,
	      "damaged: FPDT length below its 36-byte header");

	/* garbage before the tables */
	memmove(buf + 5, buf, len);
	memcpy(buf, "xxxxx", 5);
	len += 5;
	s = walk();
	CHECK(s->damaged >= 1 && s->dmg_off[0] == 0 && s->tables == 2,
	      "damaged: bytes with no signature skipped to the next table");

	/* an end before its start, and an end with no start */
	build_good();
	size_t a_end = fbpt + 8 + 48 + 34 * 2 + 58 * 2;
	for (unsigned i = 0; i < 8; i++)
		buf[a_end + 10 + i] = (uint8_t)((i == 0) ? 0x10 : 0); /* ts 16 */
	struct fpdt_run f;
	memset(&f, 0, sizeof(f));
	fpdtrun_parse(&f, buf, len, NULL);
	CHECK(f.ndamage == 1 && strstr(f.damage[0], "before its start") &&
	      !strncmp(f.damage[0], "offset ", 7), "damaged: an end before its start named");
	CHECK(f.unpaired == 0 && f.nspan == 7, "damaged: that pair is skipped, the rest paired");
	fpdtrun_free(&f);
	build_good();
	buf[fbpt + 8 + 48 + 4] = 0x02; /* A's start becomes an end without a start */
	memset(&f, 0, sizeof(f));
	fpdtrun_parse(&f, buf, len, NULL);
	CHECK(f.unpaired == 2 && f.nspan == 7, "unpaired: an end without start, a start without end");
	fpdtrun_free(&f);

	/* every cut of the good file */
	build_good();
	size_t full = len;
	static uint8_t copy[4096];
	memcpy(copy, buf, full);
	int bad = 0;
	for (size_t cut = 0; cut < full; cut++) {
		uint8_t *p = malloc(cut ? cut : 1);
		memcpy(p, copy, cut);
		memset(&f, 0, sizeof(f));
		if (fpdtrun_parse(&f, p, cut, NULL))
			bad++;
		if (cut && cut != 36 + 32 && cut != 36 + 32 + (full - 36 - 32 - 8 - 24 - 20) &&
		    !f.ndamage)
			bad++;
		fpdtrun_free(&f);
		free(p);
	}
	CHECK(!bad, "every cut of the file parses, and a cut inside a table is named");
}

static void test_ids(void)
{
	CHECK(fpdt_is_start(0x01) && fpdt_is_end(0x02) && fpdt_start_of(0x02) == 0x01 &&
	      fpdt_is_start(0x40) && fpdt_is_end(0x41) && fpdt_start_of(0x41) == 0x40 &&
	      !fpdt_is_start(0) && !fpdt_is_end(0),
	      "ProgressID: odd starts below 0x10, low nibble 0 starts above, 0 is an event");
	char b[16];
	CHECK(!strcmp(fpdt_progress_name(0x51, b, sizeof(b)), "CrossModule") &&
	      !strcmp(fpdt_progress_name(0x0b, b, sizeof(b)), "ID 0x000b"),
	      "ProgressID names");
}

int main(void)
{
	test_ids();
	test_good();
	test_damaged();
	return check_exit();
}
