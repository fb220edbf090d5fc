#ifndef APNS_BULK_CCSV_SHIM_H
#define APNS_BULK_CCSV_SHIM_H
#include <stddef.h>
#include <csv.h>

/* libcsv's option bits are plain #defines; typed copies keep Swift call sites free of casts. */
static const unsigned char apnsbulk_csv_strict = CSV_STRICT;
static const unsigned char apnsbulk_csv_strict_fini = CSV_STRICT_FINI;
static const unsigned char apnsbulk_csv_append_null = CSV_APPEND_NULL;
static const unsigned char apnsbulk_csv_empty_is_null = CSV_EMPTY_IS_NULL;
#endif
