/*
 * libFuzzer target for the packet layer. Invariants checked on any input:
 *  - stream decoding with resync accounts for every byte (packets, error
 *    gaps, the cut tail) and always makes progress;
 *  - a decoded packet re-encodes to a packet that decodes to the same
 *    fields, with the same size (CYC: at most the same size);
 *  - decoding a prefix gives the same packets, then "need more bytes";
 *  - last-IP reconstruction never fails on a decoded IP packet except for
 *    IPBytes 000b.
 * Built by mk/packets.mk with clang -fsanitize=fuzzer,address,undefined.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/pt_pkt.h"

#define REQUIRE(c)                      \
	do {                            \
		if (!(c))               \
			abort();        \
	} while (0)

static void check_packet(const struct ptpkt *p)
{
	uint8_t buf[PTPKT_MAX_SIZE + 8];
	struct ptpkt q;
	int n = ptpkt_encode(buf, sizeof(buf), p);
	REQUIRE(n > 0);
	if (p->type == ptpkt_cyc)
		REQUIRE(n <= p->size);
	else
		REQUIRE(n == p->size);
	unsigned block = p->type == ptpkt_bip ? p->u.bip.bytes : 0;
	REQUIRE(ptpkt_decode(buf, (size_t)n, block, &q) == n);
	struct ptpkt r = *p;
	r.size = (uint8_t)n;
	REQUIRE(ptpkt_same(&r, &q));
	REQUIRE(ptpkt_encode(buf, (size_t)n - 1, p) == -ptpkt_err_nospace);
}

static void stream(const uint8_t *data, size_t size, size_t start, bool set)
{
	struct ptpkt_decoder d;
	struct ptpkt p;
	struct ptpkt_lastip l;
	uint64_t bytes = 0, gap = 0;

	ptpkt_init(&d, data, size, 0);
	ptpkt_lastip_init(&l);
	d.pos = data + start;
	if (set) {
		REQUIRE(ptpkt_sync_set(&d, start) == 0);
	} else if (ptpkt_sync_forward(&d) < 0) {
		REQUIRE(ptpkt_offset(&d) <= size);
		return;
	}
	gap += ptpkt_offset(&d) - start;
	for (size_t guard = 0;; guard++) {
		REQUIRE(guard <= size + 1);
		uint64_t off = ptpkt_offset(&d);
		int r = ptpkt_next(&d, &p);
		if (r > 0) {
			REQUIRE(r == p.size && r <= PTPKT_MAX_SIZE);
			REQUIRE(ptpkt_offset(&d) == off + (unsigned)r);
			bytes += (unsigned)r;
			check_packet(&p);
			uint64_t ip;
			int lr = ptpkt_lastip_apply(&l, &p, &ip);
			if (p.type == ptpkt_tip || p.type == ptpkt_tip_pge || p.type == ptpkt_tip_pgd ||
			    p.type == ptpkt_fup)
				REQUIRE(lr == 1 || (lr == -ptpkt_err_noip && p.u.ip.ipc == 0));
			else
				REQUIRE(lr == 0);
			continue;
		}
		REQUIRE(ptpkt_offset(&d) == off);
		if (r == -ptpkt_err_eos || r == -ptpkt_err_truncated) {
			REQUIRE((r == -ptpkt_err_eos) == (off == size));
			REQUIRE(size - off < PTPKT_MAX_SIZE);
			gap += size - off;
			break;
		}
		REQUIRE(r == -ptpkt_err_bad_opc || r == -ptpkt_err_bad_packet);
		if (ptpkt_sync_forward(&d) < 0) {
			gap += size - off;
			break;
		}
		REQUIRE(ptpkt_offset(&d) > off);
		gap += ptpkt_offset(&d) - off;
	}
	REQUIRE(start + bytes + gap == size);
}

/* ptpkt_scan (--stat) stops where ptpkt_next stops, with the same counts. */
static void scan_vs_next(const uint8_t *data, size_t size)
{
	struct ptpkt_stat a, b;
	struct ptpkt_decoder d, e;
	struct ptpkt p;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	ptpkt_init(&d, data, size, 0);
	ptpkt_init(&e, data, size, 0);
	if (ptpkt_sync_forward(&d))
		return;
	REQUIRE(ptpkt_sync_forward(&e) == 0);
	for (;;) {
		int r;
		while ((r = ptpkt_next(&d, &p)) > 0) {
			a.count[p.type]++;
			a.bytes[p.type] += (unsigned)r;
		}
		int s = ptpkt_scan(&e, &b);
		REQUIRE(s == r && ptpkt_offset(&d) == ptpkt_offset(&e));
		REQUIRE(!memcmp(&a, &b, sizeof(a)));
		if (r == -ptpkt_err_eos || r == -ptpkt_err_truncated)
			break;
		int f = ptpkt_sync_forward(&d);
		REQUIRE(ptpkt_sync_forward(&e) == f);
		if (f)
			break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	/* Stream decoding from the start, and from a position picked by the
	 * first byte (mid-packet starts). */
	stream(data, size, 0, true);
	stream(data, size, 0, false);
	stream(data, size, data[0] % size, true);

	/* Stateless decode at every offset in each block context; a prefix
	 * of a packet is always "need more bytes". */
	static const unsigned blocks[3] = { 0, 4, 8 };
	for (size_t i = 0; i < size && i < 512; i++) {
		for (int b = 0; b < 3; b++) {
			struct ptpkt p;
			memset(&p, 0, sizeof(p));
			int r = ptpkt_decode(data + i, size - i, blocks[b], &p);
			if (r <= 0)
				continue;
			REQUIRE((size_t)r <= size - i && r == p.size);
			check_packet(&p);
			for (int cut = 0; cut < r; cut++) {
				struct ptpkt q;
				int c = ptpkt_decode(data + i, (size_t)cut, blocks[b], &q);
				REQUIRE(c == (cut ? -ptpkt_err_truncated : -ptpkt_err_eos));
			}
		}
	}

	scan_vs_next(data, size);
	/* Now and then, tiled beyond the size where the scan splits the
	 * buffer into parallel stretches. */
	if (size >= 16 && (data[0] & 7) == 7) {
		static uint8_t big[80000];
		size_t n = 0;
		while (n + size <= sizeof(big)) {
			memcpy(big + n, data, size);
			n += size;
		}
		scan_vs_next(big, n);
	}

	/* Backward sync from the end visits PSBs in decreasing order. */
	struct ptpkt_decoder d;
	ptpkt_init(&d, data, size, 0);
	d.pos = d.end;
	uint64_t prev = size;
	while (ptpkt_sync_backward(&d) == 0) {
		REQUIRE(ptpkt_offset(&d) < prev);
		prev = ptpkt_offset(&d);
	}
	return 0;
}
