#ifndef APNS_BULK_CNGHTTP2_SHIM_H
#define APNS_BULK_CNGHTTP2_SHIM_H
#include <nghttp2/nghttp2.h>

/* nghttp2 1.52: no macros Swift needs to call yet. Enums import as structs (.rawValue). */
static inline const char *apnsbulk_nghttp2_version_string(void) {
    return nghttp2_version(0)->version_str;
}
#endif
