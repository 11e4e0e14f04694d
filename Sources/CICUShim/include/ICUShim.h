// SPDX-License-Identifier: GPL-3.0-or-later
// A C interface over the few ICU functions Fermata calls, for the `ICU` Swift module, its only importer.
//
// It names no ICU type: ICU's own headers stay inside ICUShim.c. Foundation on Linux carries a copy of ICU
// (_FoundationICU) whose types clash with the system's (`'UErrorCode' has different definitions in different
// modules`) in any Swift module that sees both, and every module that imports Foundation and reaches ICU's headers
// through another module's clang import did. Statuses are ICU's `UErrorCode` values as plain integers (zero or
// negative: success).
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// An ICU collator (`UCollator`).
typedef struct ficu_collator ficu_collator;
/// An ICU converter (`UConverter`).
typedef struct ficu_converter ficu_converter;

/// `ucol_open(locale)`; NULL with `*status` set on failure.
ficu_collator *ficu_collator_open(const char *locale, int32_t *status);
/// `ucol_close`.
void ficu_collator_close(ficu_collator *collator);
/// `ucol_strcollUTF8`: negative, zero or positive.
int32_t ficu_collator_compare_utf8(
    const ficu_collator *collator, const char *a, int32_t a_length, const char *b, int32_t b_length, int32_t *status);

/// `ucnv_open(name)`; NULL with `*status` set on failure.
ficu_converter *ficu_converter_open(const char *name, int32_t *status);
/// `ucnv_close`.
void ficu_converter_close(ficu_converter *converter);
/// `ucnv_toUChars`: the UTF-16 units written (or needed), with `*status` set on failure.
int32_t ficu_converter_to_utf16(
    ficu_converter *converter, uint16_t *dest, int32_t dest_capacity, const char *src, int32_t src_length,
    int32_t *status);
/// `ucnv_fromUChars`: the bytes written (or needed), with `*status` set on failure; unmappable characters become
/// the character set's substitution character.
int32_t ficu_converter_from_utf16(
    ficu_converter *converter, char *dest, int32_t dest_capacity, const uint16_t *src, int32_t src_length,
    int32_t *status);
/// `u_errorName`: the name of an ICU status (`U_FILE_ACCESS_ERROR`), a static string.
const char *ficu_error_name(int32_t status);

#ifdef __cplusplus
}
#endif
