#ifndef FERRY_COPENSSL_SHIM_H
#define FERRY_COPENSSL_SHIM_H

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdlib.h>
#include <string.h>

// One function, so that Ferry decrypts a client key itself, on a thread of its choosing,
// and libcurl only ever sees an unencrypted key: libcurl 7.88 would decrypt it on the
// transfer worker for every new connection, and crashes when the passphrase is missing
// (curl issue 16806). The prefix keeps it apart from OpenSSL's own symbols.
//
// Reads the PEM private key `pem` (any form OpenSSL reads) with `passphrase` and returns it
// as unencrypted PKCS #8 PEM in a malloc'd, NUL-terminated buffer that the caller wipes and
// frees with ferry_openssl_free_key; NULL when the key cannot be read (wrong passphrase,
// unsupported form). Never prompts: a NULL passphrase is refused here.
static inline char *ferry_openssl_decrypt_private_key(const char *pem, int pem_length, const char *passphrase, size_t *length) {
    if (pem == NULL || passphrase == NULL || length == NULL || pem_length <= 0) return NULL;
    char *result = NULL;
    BIO *in = BIO_new_mem_buf(pem, pem_length);
    EVP_PKEY *key = in ? PEM_read_bio_PrivateKey(in, NULL, NULL, (void *)passphrase) : NULL;
    BIO *out = key ? BIO_new(BIO_s_mem()) : NULL;
    if (out && PEM_write_bio_PKCS8PrivateKey(out, key, NULL, NULL, 0, NULL, NULL) == 1) {
        char *data = NULL;
        long written = BIO_get_mem_data(out, &data);
        if (written > 0 && data != NULL && (result = malloc((size_t)written + 1)) != NULL) {
            memcpy(result, data, (size_t)written);
            result[written] = 0;
            *length = (size_t)written;
        }
    }
    BIO_free(out);
    EVP_PKEY_free(key);
    BIO_free(in);
    ERR_clear_error();
    return result;
}

static inline void ferry_openssl_free_key(char *key, size_t length) {
    if (key == NULL) return;
    OPENSSL_cleanse(key, length);
    free(key);
}

#endif
