#ifndef APNS_BULK_CZSTD_SHIM_H
#define APNS_BULK_CZSTD_SHIM_H
/* Only zstd's stable API: ZSTD_STATIC_LINKING_ONLY stays undefined (zstd.h tests `defined`, so
   any value, even 0, would turn on the experimental declarations, which may change between
   releases). The reader and writer need nothing beyond the stable advanced API. */
#include <zstd.h>
#endif
