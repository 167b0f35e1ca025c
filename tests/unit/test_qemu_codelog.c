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
	rmdir(dir);
	return check_exit();
}
