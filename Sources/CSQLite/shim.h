#ifndef APNS_BULK_CSQLITE_SHIM_H
#define APNS_BULK_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
