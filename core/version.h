/* efipt's version (VERSION file) and git revision, generated at build time. */
#ifndef EFIPT_CORE_VERSION_H
#define EFIPT_CORE_VERSION_H

extern const char efipt_version[];
extern const char efipt_gitrev[];

#endif
