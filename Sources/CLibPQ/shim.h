#ifndef FERRY_CLIBPQ_SHIM_H
#define FERRY_CLIBPQ_SHIM_H
// libpq's client API; nothing to adapt, this header only names it for the module map.
#include <libpq-fe.h>
#endif
