/*
 * csv.h: a run's rows of one table as CSV, the data/TABLE.csv files of a
 * result bundle (docs/bundle.md). RFC 4180 quoting: a field holding a comma,
 * a double quote, CR or LF is quoted, its quotes doubled; rows end in LF.
 * SQL NULL is an empty field and an empty text `""`, so the two stay apart;
 * REAL is written as %.17g writes it (common/numfmt.c), so a reader's strtod gives back the stored
 * double exactly (17 significant digits identify every IEEE 754 double).
 */
#ifndef TB_PUBLISH_CSV_H
#define TB_PUBLISH_CSV_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/tb_common.h"

struct sqlite3;

/* Appends s (n bytes) as one field, quoted when it must be; "" when n is 0. */
void tb_csv_text(tb_buf *b, const char *s, size_t n);
/* Appends v with %.17g ("inf", "-inf" for the infinities SQLite can hold). */
void tb_csv_real(tb_buf *b, double v);

/*
 * Appends to out the rows of table that match where (an SQL condition that
 * may use ?1, bound to run_id) ordered by rowid, under a header row: the
 * table's columns in its order (PRAGMA table_info), its BLOB columns left
 * out. Each value is written as SQLite holds it: NULL empty, INTEGER in
 * decimal, REAL with %.17g, TEXT quoted as above. Returns the number of rows,
 * or -1 with err naming the table (an SQL error, or out over its cap).
 */
/*
 * A where for tb_csv_dump_table of a large table t with a run_id column:
 * a run's rows were stored in a stretch of rowids, so they are read in rowid
 * order over that stretch (+run_id keeps the run_id index out) and need no
 * sort. Through the index, SQLite sorted a day-long run's 90,000 samples by
 * rowid. Rows of another run inside the stretch (two runs at once) are left
 * out all the same.
 */
#define TB_CSV_BY_RUN_STRETCH(t)                                                                                       \
    "rowid BETWEEN (SELECT min(rowid) FROM " t " WHERE run_id = ?1) AND (SELECT max(rowid) FROM " t                    \
    " WHERE run_id = ?1) AND +run_id = ?1"

int64_t tb_csv_dump_table(struct sqlite3 *db, const char *table, const char *where, int64_t run_id, tb_buf *out,
                          char *err) TB_WUR;

#endif
