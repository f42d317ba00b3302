#ifndef FERRY_CCURL_SHIM_H
#define FERRY_CCURL_SHIM_H

#include <curl/curl.h>
#include <pthread.h>
#include <stdlib.h>

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

// A share handle with its own locks, one per kind of data (curl may hold the
// locks of two kinds at once), so that an easy handle cleaned up on another
// thread than the one driving the share's transfers cannot race with them.
typedef struct {
    CURLSH *share;
    pthread_mutex_t locks[CURL_LOCK_DATA_LAST];
} ferry_curl_share;

static void ferry_curl_share_lock(CURL *handle, curl_lock_data data, curl_lock_access access, void *owner) {
    (void)handle;
    (void)access;
    pthread_mutex_lock(&((ferry_curl_share *)owner)->locks[data]);
}

static void ferry_curl_share_unlock(CURL *handle, curl_lock_data data, void *owner) {
    (void)handle;
    pthread_mutex_unlock(&((ferry_curl_share *)owner)->locks[data]);
}

static inline void ferry_curl_share_destroy_locks(ferry_curl_share *owner) {
    for (int kind = 0; kind < CURL_LOCK_DATA_LAST; kind++) pthread_mutex_destroy(&owner->locks[kind]);
}

// A share of the connection, DNS and TLS session caches; NULL if curl refuses.
static inline ferry_curl_share *ferry_curl_share_new(void) {
    ferry_curl_share *owner = malloc(sizeof *owner);
    if (!owner) return NULL;
    for (int kind = 0; kind < CURL_LOCK_DATA_LAST; kind++) pthread_mutex_init(&owner->locks[kind], NULL);
    owner->share = curl_share_init();
    if (owner->share
        && curl_share_setopt(owner->share, CURLSHOPT_LOCKFUNC, ferry_curl_share_lock) == CURLSHE_OK
        && curl_share_setopt(owner->share, CURLSHOPT_UNLOCKFUNC, ferry_curl_share_unlock) == CURLSHE_OK
        && curl_share_setopt(owner->share, CURLSHOPT_USERDATA, owner) == CURLSHE_OK
        && curl_share_setopt(owner->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT) == CURLSHE_OK
        && curl_share_setopt(owner->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS) == CURLSHE_OK
        && curl_share_setopt(owner->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION) == CURLSHE_OK) {
        return owner;
    }
    if (owner->share) curl_share_cleanup(owner->share);
    ferry_curl_share_destroy_locks(owner);
    free(owner);
    return NULL;
}

// Closes the share's cached connections and frees it; CURLSHE_IN_USE (and
// nothing freed) while an easy handle still uses it.
static inline CURLSHcode ferry_curl_share_free(ferry_curl_share *owner) {
    CURLSHcode code = curl_share_cleanup(owner->share);
    if (code != CURLSHE_OK) return code;
    ferry_curl_share_destroy_locks(owner);
    free(owner);
    return CURLSHE_OK;
}

static inline CURLcode ferry_curl_easy_setopt_share(CURL *handle, ferry_curl_share *owner) {
    return curl_easy_setopt(handle, CURLOPT_SHARE, owner->share);
}

// CURLAUTH_* are macros with casts, which Swift does not import.
static const unsigned long ferry_curlauth_basic = CURLAUTH_BASIC;
static const unsigned long ferry_curlauth_digest = CURLAUTH_DIGEST;
static const unsigned long ferry_curlauth_ntlm = CURLAUTH_NTLM;
static const unsigned long ferry_curlauth_negotiate = CURLAUTH_NEGOTIATE;

#endif
