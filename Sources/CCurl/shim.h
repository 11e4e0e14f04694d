#pragma once
#include <curl/curl.h>

/* curl_easy_setopt is variadic, which Swift cannot call: one typed wrapper per kind of argument. */
static inline CURLcode fermata_curl_setopt_long(CURL *easy, CURLoption option, long value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode fermata_curl_setopt_string(CURL *easy, CURLoption option, const char *value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode fermata_curl_setopt_pointer(CURL *easy, CURLoption option, void *value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode fermata_curl_setopt_slist(CURL *easy, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode fermata_curl_setopt_callback(CURL *easy, CURLoption option, curl_write_callback value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode fermata_curl_getinfo_long(CURL *easy, CURLINFO info, long *value) {
    return curl_easy_getinfo(easy, info, value);
}

/* Macros built of other macros, which Swift does not import. */
static const long fermata_curl_global_default = CURL_GLOBAL_DEFAULT;
static const int fermata_curlpause_cont = CURLPAUSE_CONT;
static const CURLversion fermata_curlversion_now = CURLVERSION_NOW;
static const long fermata_curlauth_basic = (long)CURLAUTH_BASIC;
