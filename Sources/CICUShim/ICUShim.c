// SPDX-License-Identifier: GPL-3.0-or-later
// ICU renames every entry point with its major version (ucol_open -> ucol_open_72) through macros that Swift
// cannot import; calling them from C lets the macros expand, so no version is hard-coded.

#include "ICUShim.h"

#include <unicode/ucnv.h>
#include <unicode/ucol.h>
#include <unicode/utypes.h>

ficu_collator *ficu_collator_open(const char *locale, int32_t *status) {
    UErrorCode error = U_ZERO_ERROR;
    UCollator *collator = ucol_open(locale, &error);
    *status = (int32_t)error;
    return (ficu_collator *)collator;
}

void ficu_collator_close(ficu_collator *collator) { ucol_close((UCollator *)collator); }

int32_t ficu_collator_compare_utf8(
    const ficu_collator *collator, const char *a, int32_t a_length, const char *b, int32_t b_length,
    int32_t *status) {
    UErrorCode error = U_ZERO_ERROR;
    UCollationResult result = ucol_strcollUTF8((const UCollator *)collator, a, a_length, b, b_length, &error);
    *status = (int32_t)error;
    return (int32_t)result;
}

ficu_converter *ficu_converter_open(const char *name, int32_t *status) {
    UErrorCode error = U_ZERO_ERROR;
    UConverter *converter = ucnv_open(name, &error);
    *status = (int32_t)error;
    return (ficu_converter *)converter;
}

void ficu_converter_close(ficu_converter *converter) { ucnv_close((UConverter *)converter); }

int32_t ficu_converter_to_utf16(
    ficu_converter *converter, uint16_t *dest, int32_t dest_capacity, const char *src, int32_t src_length,
    int32_t *status) {
    UErrorCode error = U_ZERO_ERROR;
    int32_t count = ucnv_toUChars((UConverter *)converter, (UChar *)dest, dest_capacity, src, src_length, &error);
    *status = (int32_t)error;
    return count;
}

int32_t ficu_converter_from_utf16(
    ficu_converter *converter, char *dest, int32_t dest_capacity, const uint16_t *src, int32_t src_length,
    int32_t *status) {
    UErrorCode error = U_ZERO_ERROR;
    int32_t count = ucnv_fromUChars((UConverter *)converter, dest, dest_capacity, (const UChar *)src, src_length, &error);
    *status = (int32_t)error;
    return count;
}

const char *ficu_error_name(int32_t status) { return u_errorName((UErrorCode)status); }
