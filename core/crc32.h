/*
 * CRC-32 (IEEE 802.3, reflected polynomial EDB88320H, as zlib and UEFI's
 * CalculateCrc32 compute it): the checksums of the recorder region
 * (core/recorder.h). crc32_update(0, data, n) is the CRC of data; feed
 * pieces by passing the previous result.
 */
#ifndef EFIPT_CORE_CRC32_H
#define EFIPT_CORE_CRC32_H

#include <stddef.h>
#include <stdint.h>

uint32_t crc32_update(uint32_t crc, const void *data, size_t n);

#endif
