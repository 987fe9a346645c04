/*
 * tools.h: where the embedded SUT finds the servers' programs. An environment
 * variable names each one explicitly; else the Debian locations and the PATH
 * are searched. On failure err says where it looked and what to install.
 */
#ifndef TB_SUT_TOOLS_H
#define TB_SUT_TOOLS_H

#include <stddef.h>

#include "common/tb_common.h"

/* Folder of initdb and postgres: TB_PG_BINDIR, else the newest
 * /usr/lib/postgresql/N/bin, else the PATH. 0 or -1 with err. */
int sut_find_pg_bindir(char *out, size_t len, char *err);
/* redis-server: TB_REDIS_SERVER, else the PATH, /usr/bin, /usr/sbin. */
int sut_find_redis(char *out, size_t len, char *err);
/* The dovecot master: TB_DOVECOT, else /usr/sbin, else the PATH. */
int sut_find_dovecot(char *out, size_t len, char *err);

#endif
