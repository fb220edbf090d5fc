#ifndef APNS_BULK_COPENSSL_SHIM_H
#define APNS_BULK_COPENSSL_SHIM_H
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/bn.h>
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/pkcs12.h>
#include <openssl/provider.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>
#include <openssl/decoder.h>

/* OpenSSL 3.0 spells these as function-like macros (or variadic functions), which Swift cannot
   call. Each wrapper is the macro and nothing more. */

static inline int apnsbulk_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}
static inline int apnsbulk_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_max_proto_version(ctx, version);
}
static inline int apnsbulk_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}
static inline long apnsbulk_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_mode(ctx, mode);
}
static inline void apnsbulk_SSL_CTX_set_read_ahead(SSL_CTX *ctx, int yes) {
    SSL_CTX_set_read_ahead(ctx, yes);
}
static inline long apnsbulk_SSL_set_mode(SSL *ssl, long mode) {
    return SSL_set_mode(ssl, mode);
}
static inline long apnsbulk_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_session_cache_mode(ctx, mode);
}
static inline long apnsbulk_SSL_CTX_add_extra_chain_cert(SSL_CTX *ctx, X509 *cert) {
    return SSL_CTX_add_extra_chain_cert(ctx, cert);
}
static inline X509 *apnsbulk_SSL_get_peer_certificate(const SSL *ssl) {
    return SSL_get1_peer_certificate(ssl);
}
static inline void apnsbulk_OPENSSL_free(void *ptr) {
    OPENSSL_free(ptr);
}
static inline long apnsbulk_BIO_get_mem_data(BIO *bio, char **out) {
    return BIO_get_mem_data(bio, out);
}
static inline size_t apnsbulk_BIO_pending(BIO *bio) {
    return (size_t)BIO_pending(bio);
}
static inline EVP_PKEY *apnsbulk_EVP_EC_gen_p256(void) {
    return EVP_EC_gen("P-256");
}
static inline int apnsbulk_EVP_PKEY_id(const EVP_PKEY *pkey) {
    return EVP_PKEY_get_id(pkey);
}
static inline int apnsbulk_EVP_PKEY_bits(const EVP_PKEY *pkey) {
    return EVP_PKEY_get_bits(pkey);
}
static inline void apnsbulk_X509V3_set_ctx_nodb(X509V3_CTX *ctx) {
    X509V3_set_ctx_nodb(ctx);
}
static inline int apnsbulk_sk_X509_num(const STACK_OF(X509) *stack) {
    return sk_X509_num(stack);
}
static inline X509 *apnsbulk_sk_X509_value(const STACK_OF(X509) *stack, int index) {
    return sk_X509_value(stack, index);
}
static inline void apnsbulk_sk_X509_pop_free(STACK_OF(X509) *stack) {
    sk_X509_pop_free(stack, X509_free);
}
static inline int apnsbulk_NID_X9_62_prime256v1(void) { return NID_X9_62_prime256v1; }
static inline int apnsbulk_EVP_PKEY_EC(void) { return EVP_PKEY_EC; }
static inline int apnsbulk_EVP_PKEY_RSA(void) { return EVP_PKEY_RSA; }
static inline unsigned long apnsbulk_SSL_OP_NO_RENEGOTIATION(void) { return SSL_OP_NO_RENEGOTIATION; }
static inline long apnsbulk_SSL_MODE_RELEASE_BUFFERS(void) { return SSL_MODE_RELEASE_BUFFERS; }
static inline long apnsbulk_SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER(void) { return SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER; }
static inline long apnsbulk_SSL_MODE_ENABLE_PARTIAL_WRITE(void) { return SSL_MODE_ENABLE_PARTIAL_WRITE; }

/* Add further wrappers below, one per macro, grouped by the module that needs them. */

/* ---- transport TLS (Sources/Transport: TLS) ---- */
static inline STACK_OF(X509) *apnsbulk_sk_X509_new_null(void) {
    return sk_X509_new_null();
}
static inline int apnsbulk_sk_X509_push(STACK_OF(X509) *stack, X509 *cert) {
    return sk_X509_push(stack, cert);
}

#endif
