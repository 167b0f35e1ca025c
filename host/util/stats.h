/*
 * How often a command read each file of its run directory and decoded a
 * trace: every input is read once and every trace decoded once, and the
 * tests hold efipt to that (EFIPT_STATS=1 prints the counts on stderr when
 * a command ends: "efipt stats: manifest 1, memmap 1, images 1, decodes 1").
 */
#ifndef EFIPT_HOST_STATS_H
#define EFIPT_HOST_STATS_H

struct stats {
	unsigned manifest;	/* manifest.json parsed */
	unsigned memmap;	/* memmap.json parsed */
	unsigned images;	/* images.json parsed (a run's or --images) */
	unsigned decodes;	/* traces decoded */
};
extern struct stats stats;

/* Print the counts when EFIPT_STATS=1. */
void stats_report(void);

#endif
