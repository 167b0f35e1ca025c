/*
 * MSRs efipt programs (SDM 33.2.8). The IA32_RTIT_* numbers and the field
 * masks of these MSRs and of ToPA entries are in core/pt_rtit.h (config
 * validation and the PT unit's rules in core/ use them).
 */
#ifndef EFIPT_ARCH_PT_MSR_H
#define EFIPT_ARCH_PT_MSR_H

#include "core/pt_rtit.h"

#define MSR_PLATFORM_INFO             0x0ceu

#endif
