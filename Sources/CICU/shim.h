#pragma once
#include <unicode/ucnv.h>
#include <unicode/ucol.h>
#include <unicode/ustring.h>
#include <unicode/utypes.h>

// ICU renames every entry point with its major version (ucol_open -> ucol_open_72) through macros that
// Swift cannot import; these inline wrappers let the macros expand in C, so no version is hard-coded.

static inline UCollator *fermata_ucol_open(const char *locale, UErrorCode *status) {
    return ucol_open(locale, status);
}

static inline void fermata_ucol_close(UCollator *collator) { ucol_close(collator); }

static inline UCollationResult fermata_ucol_strcollUTF8(
    const UCollator *collator, const char *a, int32_t aLength, const char *b, int32_t bLength,
    UErrorCode *status) {
    return ucol_strcollUTF8(collator, a, aLength, b, bLength, status);
}

static inline int32_t fermata_u_strFoldCase(
    UChar *dest, int32_t destCapacity, const UChar *src, int32_t srcLength, uint32_t options,
    UErrorCode *status) {
    return u_strFoldCase(dest, destCapacity, src, srcLength, options, status);
}

static inline UChar *fermata_u_strFromUTF8(
    UChar *dest, int32_t destCapacity, int32_t *destLength, const char *src, int32_t srcLength,
    UErrorCode *status) {
    return u_strFromUTF8(dest, destCapacity, destLength, src, srcLength, status);
}

static inline char *fermata_u_strToUTF8(
    char *dest, int32_t destCapacity, int32_t *destLength, const UChar *src, int32_t srcLength,
    UErrorCode *status) {
    return u_strToUTF8(dest, destCapacity, destLength, src, srcLength, status);
}

static inline UConverter *fermata_ucnv_open(const char *name, UErrorCode *status) { return ucnv_open(name, status); }

static inline void fermata_ucnv_close(UConverter *converter) { ucnv_close(converter); }

static inline int32_t fermata_ucnv_toUChars(
    UConverter *converter, UChar *dest, int32_t destCapacity, const char *src, int32_t srcLength,
    UErrorCode *status) {
    return ucnv_toUChars(converter, dest, destCapacity, src, srcLength, status);
}
