/*
 * Code that changes while traced, without QEMU: the plugin's code map says
 * when an address's bytes change (qemu-plugin/codemap.c), its log writes
 * codechanges.bin (qemu-plugin/codelog.c, positions moved for a wrapped
 * trace), and the host reads it back and lays each change over the code
 * when the decoder reaches its position (host/input/code_changes.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "host/input/code_changes.h"
#include "qemu-plugin/codelog.h"
#include "qemu-plugin/codemap.h"
#include "host/util/file_io.h"

static const uint8_t up[] = { 0x31, 0xc0, 0xff, 0xc0, 0xc3 };		/* xor; inc; ret */
static const uint8_t down[] = { 0xb8, 0x0a, 0x00, 0x00, 0x00 };	/* mov eax,10 */

static int base_read(void *ctx, uint64_t ip, uint8_t *buf, size_t n)
{
	(void)ctx;
	if (ip < 0x1000 || ip >= 0x1000 + sizeof(up))
		return 0;
	size_t k = 0x1000 + sizeof(up) - ip;
	k = k < n ? k : n;
	memcpy(buf, up + (ip - 0x1000), k);
	return (int)k;
}

/*
 * Code one CPU changed is changed for all: CPU 0 runs new code at 0x1000
 * first, CPU 1 at 0x1003; each other CPU takes each change up at its next
 * instruction (its own position then), and each CPU's decoder applies it.
 */
static void several_cpus(const char *dir)
{
	struct codelog l;
	memset(&l, 0, sizeof(l));
	size_t seen[3] = { 0, 0, 0 };
	CHECK(!codelog_foreign(&l, 1, &seen[1]), "no changes: nothing to take up");
	codelog_add(&l, 0, 40, 0x1000, down, sizeof(down));
	CHECK(!codelog_foreign(&l, 0, &seen[0]) && seen[0] == 1, "a CPU's own change: not again");
	CHECK(codelog_foreign(&l, 1, &seen[1]), "CPU 1 sees CPU 0's change");
	codelog_copy_foreign(&l, 1, &seen[1], 7);
	codelog_add(&l, 1, 20, 0x1003, up + 3, 2);
	CHECK(codelog_foreign(&l, 0, &seen[0]), "CPU 0 sees CPU 1's change, not its copy");
	codelog_copy_foreign(&l, 0, &seen[0], 60);
	CHECK(!codelog_foreign(&l, 1, &seen[1]) && !codelog_foreign(&l, 0, &seen[0]),
	      "copies are not taken up again");
	CHECK(codelog_foreign(&l, 2, &seen[2]), "a CPU that ran nothing yet sees both");
	codelog_copy_foreign(&l, 2, &seen[2], 3);
	CHECK(l.n == 6 && codelog_copies(&l) == 4 && !codelog_foreign(&l, 2, &seen[2]),
	      "every change in every other CPU's trace once");
	uint64_t drop[3] = { 0, 0, 0 };
	char err[4400];
	CHECK(!codelog_write(&l, dir, drop, 3, NULL, NULL, err, sizeof(err)), "written");
	codelog_free(&l);

	struct codechg *r;
	size_t n;
	if (!CHECK(!codechanges_load(dir, 6, &r, &n, err, sizeof(err)) && n == 6,
		   "6 records read back")) {
		free(r);
		return;
	}
	CHECK(r[0].cpu == 0 && r[0].pos == 40 && r[0].by == 0 && !r[0].flags && r[1].cpu == 0 &&
		      r[1].pos == 60 && r[1].flags == CODECHG_OTHER_CPU && r[1].by == 1,
	      "CPU 0: its own change, then CPU 1's at CPU 0's position");
	CHECK(r[2].cpu == 1 && r[2].pos == 7 && r[2].by == 0 && r[3].cpu == 1 && r[3].pos == 20 &&
		      r[3].by == 1,
	      "CPU 1: CPU 0's change at CPU 1's position, then its own");
	CHECK(r[4].cpu == 2 && r[4].pos == 3 && r[5].cpu == 2 && r[5].pos == 3, "CPU 2: both at 3");

	/* each CPU's decoder: CPU 1's reads CPU 0's code from its position 7 */
	uint8_t b[8];
	for (unsigned cpu = 0; cpu < 3; cpu++) {
		struct codechanges c;
		codechanges_start(&c, r, n, cpu, (struct ptimg){ base_read, NULL });
		struct ptimg img = codechanges_image(&c);
		struct ptflow_decoder d;
		memset(&d, 0, sizeof(d));
		char name[80];
		snprintf(name, sizeof(name), "CPU %u: two changes, the first at its own position",
			 cpu);
		CHECK(codechanges_attach(&c, &d) == 2 && d.pos_at == r[2 * cpu].pos, name);
		uint64_t at = d.pos_at;
		while (at != UINT64_MAX)
			at = d.pos_fn(d.pos_ctx, at);
		snprintf(name, sizeof(name), "CPU %u: both changes in its code at the end", cpu);
		CHECK(img.read(img.ctx, 0x1000, b, 5) == 5 && !memcmp(b, down, 3) &&
			      !memcmp(b + 3, up + 3, 2),
		      name);
		codechanges_free(&c);
	}
	free(r);

	/* the flags byte: unknown bits refused; files without flags read as before */
	uint8_t rec[CODECHG_HEADER + CODECHG_RECORD];
	struct codechg g = { .pos = 1, .addr = 0x1000, .cpu = 2, .len = 1, .bytes = { 0x90 } };
	codechg_header(rec);
	codechg_put(rec + CODECHG_HEADER, &g);
	const char *why = NULL;
	CHECK(!codechg_get(rec, sizeof(rec), 0, &g, &why) && g.by == 2 && !g.flags,
	      "no flags: the CPU that ran it is its own");
	CHECK(rec[CODECHG_HEADER + 20] == 2, "by written as the record's CPU");
	rec[CODECHG_HEADER + 19] = 2;
	CHECK(codechg_get(rec, sizeof(rec), 0, &g, &why) && strstr(why, "unknown flags"),
	      "unknown flags refused");
}

/* An image loaded while traced where the snapshots have nothing
 * (efi/load_watch.c): its code comes from the changes alone, from their
 * position on. */
static void fresh_memory(const char *dir)
{
	struct codelog l;
	memset(&l, 0, sizeof(l));
	codelog_add(&l, 0, 10, 0x5000, down, sizeof(down));
	codelog_add(&l, 0, 10, 0x5000 + sizeof(down), up, sizeof(up));
	uint64_t drop[1] = { 0 };
	char err[4400];
	CHECK(!codelog_write(&l, dir, drop, 1, NULL, NULL, err, sizeof(err)), "fresh: written");
	codelog_free(&l);
	struct codechg *r;
	size_t n;
	if (!CHECK(!codechanges_load(dir, -1, &r, &n, err, sizeof(err)) && n == 2, "fresh: read"))
		return;
	struct codechanges c;
	codechanges_start(&c, r, n, 0, (struct ptimg){ base_read, NULL });
	struct ptimg img = codechanges_image(&c);
	struct ptflow_decoder d;
	memset(&d, 0, sizeof(d));
	codechanges_attach(&c, &d);
	uint8_t b[16];
	CHECK(img.read(img.ctx, 0x5000, b, 16) <= 0, "fresh: no code before its position");
	CHECK(d.pos_fn(d.pos_ctx, 10) == UINT64_MAX, "fresh: both at 10");
	CHECK(img.read(img.ctx, 0x5000, b, 16) == 10 && !memcmp(b, down, 5) && !memcmp(b + 5, up, 5),
	      "fresh: the new code from its position on, across records, as far as it goes");
	CHECK(img.read(img.ctx, 0x5003, b, 4) == 4 && b[0] == down[3], "fresh: from within");
	CHECK(img.read(img.ctx, 0x1000, b, 5) == 5 && !memcmp(b, up, 5), "fresh: old code kept");
	codechanges_free(&c);
	free(r);
}

int main(void)
{
	struct codemap m;
	codemap_init(&m);
	CHECK(!codemap_add(&m, 0x1000, up, sizeof(up)), "first bytes at an address: no change");
	CHECK(!codemap_add(&m, 0x1000, up, sizeof(up)), "the same bytes again: no change");
	CHECK(codemap_add(&m, 0x1000, down, sizeof(down)), "other bytes: a change");
	CHECK(!codemap_add(&m, 0x1000, down, sizeof(down)), "... compared with the last bytes seen");
	CHECK(codemap_add(&m, 0x1000, up, 2), "the first bytes back: a change again");
	CHECK(m.changes == 2 && m.conflicts == 5 + 2 && m.first_conflict == 0x1000,
	      "changes and changed bytes counted");
	codemap_free(&m);

	char dir[] = "/tmp/efipt-codelog-XXXXXX";
	CHECK(mkdtemp(dir) != NULL, "a directory");
	struct codelog l;
	memset(&l, 0, sizeof(l));
	codelog_add(&l, 0, 3, 0x1000, down, sizeof(down));	/* before the kept bytes */
	codelog_add(&l, 1, 50, 0x2000, up, sizeof(up));
	codelog_add(&l, 0, 100, 0x1000, up, 2);
	uint64_t drop[2] = { 5, 0 };
	char err[4400];
	CHECK(!codelog_write(&l, dir, drop, 2, NULL, NULL, err, sizeof(err)), "codechanges.bin written");
	codelog_free(&l);

	struct codechg *r;
	size_t n;
	CHECK(!codechanges_load(dir, 3, &r, &n, err, sizeof(err)) && n == 3, "read back");
	CHECK(r[0].cpu == 0 && r[0].pos == 0 && r[1].cpu == 0 && r[1].pos == 95 && r[2].cpu == 1 &&
		      r[2].pos == 50,
	      "sorted by CPU, then position; a wrapped trace's positions moved");
	CHECK(r[0].len == sizeof(down) && !memcmp(r[0].bytes, down, sizeof(down)), "bytes kept");

	struct codechanges c;
	codechanges_start(&c, r, n, 0, (struct ptimg){ base_read, NULL });
	struct ptimg img = codechanges_image(&c);
	struct ptflow_decoder d;
	memset(&d, 0, sizeof(d));
	CHECK(codechanges_attach(&c, &d) == 2 && d.pos_at == 0, "CPU 0's two changes, the first at 0");
	uint8_t b[8];
	CHECK(img.read(img.ctx, 0x1000, b, 5) == 5 && !memcmp(b, up, 5), "the first code before");
	uint64_t next = d.pos_fn(d.pos_ctx, 0);
	CHECK(next == 95 && img.read(img.ctx, 0x1000, b, 5) == 5 && !memcmp(b, down, 5),
	      "the second code from its position on");
	CHECK(d.pos_fn(d.pos_ctx, 94) == 95 && !memcmp(b, down, 5), "nothing before the next");
	CHECK(d.pos_fn(d.pos_ctx, 95) == UINT64_MAX && img.read(img.ctx, 0x1000, b, 5) == 5 &&
		      !memcmp(b, up, 2) && !memcmp(b + 2, down + 2, 3),
	      "the first code's two bytes back over it");
	CHECK(img.read(img.ctx, 0x1003, b, 8) == 2 && b[0] == down[3],
	      "as far as the code underneath goes");
	codechanges_free(&c);
	free(r);

	CHECK(codechanges_load(dir, 4, &r, &n, err, sizeof(err)) &&
		      strstr(err, "3 code changes, manifest.json says 4"),
	      "a count other than the manifest's refused");
	char path[4200];
	snprintf(path, sizeof(path), "%s/codechanges.bin", dir);
	unlink(path);
	CHECK(!codechanges_load(dir, -1, &r, &n, err, sizeof(err)) && n == 0, "no file: no changes");
	CHECK(codechanges_load(dir, 2, &r, &n, err, sizeof(err)) && strstr(err, "missing"),
	      "no file where the manifest counts changes: refused");
	several_cpus(dir);
	fresh_memory(dir);
	if (remove_tree(dir))
		printf("# %s left behind\n", dir);
	return check_exit();
}
