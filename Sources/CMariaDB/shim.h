#ifndef APNS_BULK_CMARIADB_SHIM_H
#define APNS_BULK_CMARIADB_SHIM_H
#include <mysql.h>
#endif
