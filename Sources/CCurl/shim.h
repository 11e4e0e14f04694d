#pragma once
/* libcurl's headers only: the library (libcurl-gnutls, the flavour Debian's mpd links) is not linked but loaded
 * with dlopen on first use (Curl module, CurlLibrary), and every function Fermata calls goes through the table
 * below. */
#define CURL_DISABLE_TYPECHECK 1
#include <dlfcn.h>
#include <stddef.h>
#include <curl/curl.h>

/* The soname Debian's mpd links (libcurl3-gnutls, whose libcurl-gnutls.so.4 is what libcurl4-gnutls-dev's
 * libcurl.so names): scripts/make-deb.py reads it from here. */
#define FERMATA_CURL_SONAME "libcurl-gnutls.so.4"

/* Every libcurl function Fermata calls. Add a function here (and only here): the table's field gets the exact
 * type of libcurl's own declaration. */
#define FERMATA_CURL_FUNCTIONS(X) \
    X(curl_global_init) \
    X(curl_version_info) \
    X(curl_easy_init) \
    X(curl_easy_cleanup) \
    X(curl_easy_setopt) \
    X(curl_easy_getinfo) \
    X(curl_easy_perform) \
    X(curl_easy_pause) \
    X(curl_easy_strerror) \
    X(curl_multi_init) \
    X(curl_multi_cleanup) \
    X(curl_multi_add_handle) \
    X(curl_multi_remove_handle) \
    X(curl_multi_perform) \
    X(curl_multi_info_read) \
    X(curl_multi_poll) \
    X(curl_slist_append) \
    X(curl_slist_free_all) \
    X(curl_getdate)

/* The resolved functions of the library's one load. (Swift sees no field of the variadic curl_easy_setopt and
 * curl_easy_getinfo: it calls them through the typed wrappers below.) */
#pragma clang assume_nonnull begin
typedef struct fermata_curl_functions {
#define FERMATA_CURL_FIELD(name) __typeof__(name) *name;
    FERMATA_CURL_FUNCTIONS(FERMATA_CURL_FIELD)
#undef FERMATA_CURL_FIELD
} fermata_curl_functions;
#pragma clang assume_nonnull end

/* Fills `functions` from the library's handle (dlopen's). Returns NULL, or the name of the first function not
 * found (then `functions` is partly filled and must not be used). */
static inline const char *_Nullable fermata_curl_resolve(
    fermata_curl_functions *_Nonnull functions, void *_Nonnull library) {
#define FERMATA_CURL_RESOLVE(name) \
    functions->name = (__typeof__(name) *)dlsym(library, #name); \
    if (functions->name == NULL) return #name;
    FERMATA_CURL_FUNCTIONS(FERMATA_CURL_RESOLVE)
#undef FERMATA_CURL_RESOLVE
    return NULL;
}

/* curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: one typed wrapper per kind of
 * argument, each calling through the table (passed by value: Swift cannot point at a constant). */
static inline CURLcode fermata_curl_setopt_long(
    fermata_curl_functions functions, CURL *_Nonnull easy, CURLoption option, long value) {
    return functions.curl_easy_setopt(easy, option, value);
}
static inline CURLcode fermata_curl_setopt_string(
    fermata_curl_functions functions, CURL *_Nonnull easy, CURLoption option,
    const char *_Nonnull value) {
    return functions.curl_easy_setopt(easy, option, value);
}
static inline CURLcode fermata_curl_setopt_pointer(
    fermata_curl_functions functions, CURL *_Nonnull easy, CURLoption option,
    void *_Nullable value) {
    return functions.curl_easy_setopt(easy, option, value);
}
static inline CURLcode fermata_curl_setopt_slist(
    fermata_curl_functions functions, CURL *_Nonnull easy, CURLoption option,
    struct curl_slist *_Nullable value) {
    return functions.curl_easy_setopt(easy, option, value);
}
static inline CURLcode fermata_curl_setopt_callback(
    fermata_curl_functions functions, CURL *_Nonnull easy, CURLoption option,
    curl_write_callback _Nullable value) {
    return functions.curl_easy_setopt(easy, option, value);
}
static inline CURLcode fermata_curl_getinfo_long(
    fermata_curl_functions functions, CURL *_Nonnull easy, CURLINFO info, long *_Nonnull value) {
    return functions.curl_easy_getinfo(easy, info, value);
}

/* Macros built of other macros, which Swift does not import. */
static const long fermata_curl_global_default = CURL_GLOBAL_DEFAULT;
static const int fermata_curlpause_cont = CURLPAUSE_CONT;
static const CURLversion fermata_curlversion_now = CURLVERSION_NOW;
static const long fermata_curlauth_basic = (long)CURLAUTH_BASIC;
