#ifndef APNS_BULK_CLIBPQ_SHIM_H
#define APNS_BULK_CLIBPQ_SHIM_H
#include <libpq-fe.h>
#endif
