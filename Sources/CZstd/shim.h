#ifndef APNS_BULK_CZSTD_SHIM_H
#define APNS_BULK_CZSTD_SHIM_H
#define ZSTD_STATIC_LINKING_ONLY 0
#include <zstd.h>
#endif
