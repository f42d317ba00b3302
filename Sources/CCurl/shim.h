#ifndef FERRY_CCURL_SHIM_H
#define FERRY_CCURL_SHIM_H

#include <curl/curl.h>

// curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are C variadic
// functions, which Swift cannot call. Each function below fixes one argument
// type so Swift can; the prefix keeps them apart from curl's own symbols.

static inline CURLcode ferry_curl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ferry_curl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

// curl copies string options (except CURLOPT_POSTFIELDS), so the caller's
// buffer need only live for the duration of the call.
static inline CURLcode ferry_curl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

// For data pointers (WRITEDATA and friends) and curl_slist lists, which curl
// does not copy: the caller keeps them alive while the handle uses them.
static inline CURLcode ferry_curl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ferry_curl_easy_setopt_blob(CURL *handle, CURLoption option, struct curl_blob *value) {
    return curl_easy_setopt(handle, option, value);
}

// Callbacks, one per signature curl expects.
static inline CURLcode ferry_curl_easy_setopt_write_function(CURL *handle, CURLoption option, curl_write_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

static inline CURLcode ferry_curl_easy_setopt_read_function(CURL *handle, CURLoption option, curl_read_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

static inline CURLcode ferry_curl_easy_setopt_seek_function(CURL *handle, CURLoption option, curl_seek_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

static inline CURLcode ferry_curl_easy_setopt_xferinfo_function(CURL *handle, CURLoption option, curl_xferinfo_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

static inline CURLcode ferry_curl_easy_setopt_opensocket_function(CURL *handle, CURLoption option, curl_opensocket_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

static inline CURLcode ferry_curl_easy_setopt_closesocket_function(CURL *handle, CURLoption option, curl_closesocket_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

static inline CURLcode ferry_curl_easy_setopt_sockopt_function(CURL *handle, CURLoption option, curl_sockopt_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

static inline CURLcode ferry_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode ferry_curl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode ferry_curl_easy_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode ferry_curl_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLMcode ferry_curl_multi_setopt_long(CURLM *handle, CURLMoption option, long value) {
    return curl_multi_setopt(handle, option, value);
}

// CURLAUTH_* are macros with casts, which Swift does not import.
static const unsigned long ferry_curlauth_basic = CURLAUTH_BASIC;
static const unsigned long ferry_curlauth_digest = CURLAUTH_DIGEST;
static const unsigned long ferry_curlauth_ntlm = CURLAUTH_NTLM;
static const unsigned long ferry_curlauth_negotiate = CURLAUTH_NEGOTIATE;

#endif
