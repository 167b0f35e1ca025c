/* Random Intel PT packets for tests, the differential test and the bench. */
#ifndef EFIPT_TESTS_PTPKT_GEN_H
#define EFIPT_TESTS_PTPKT_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "core/pt_pkt.h"

/* xorshift64*: deterministic, seedable, never returns the same state twice. */
uint64_t ptgen_rand(uint64_t *state);

/* A random valid packet of the given type (every field within its bits).
 * BIPs get bip_bytes (4 or 8) payload bytes. size is left 0. */
void ptgen_packet(uint64_t *rng, enum ptpkt_type type, unsigned bip_bytes, struct ptpkt *p);

/*
 * Fill buf with a random valid stream: a PSB+ header, then random packets of
 * every type, with packet blocks (BBP, BIPs, BEP) where allowed and a PSB
 * every psb_period bytes. If pkts is not NULL, the packets written (at most
 * max_pkts) are stored there. Returns the bytes used.
 */
size_t ptgen_stream(uint64_t *rng, uint8_t *buf, size_t size, size_t psb_period,
		    struct ptpkt *pkts, size_t max_pkts, size_t *npkts);

#endif
