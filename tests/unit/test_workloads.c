/*
 * test_workloads.c: loadgen's workloads (loadgen/workload.c) against the tile
 * model's catalog of kinds (tiles/kinds.c): they are one list. Every workload
 * compiled in is a catalog kind whose op names it takes from the catalog (the
 * same array, not a copy), and every catalog kind has a workload. A QoS rule
 * the tile parser accepts therefore names an op the workload runs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "loadgen/workload.h"
#include "tiles/kinds.h"

static void workloads_match_kinds(void **state) {
    (void)state;
    assert_int_equal(tb_workload_count(), tb_kind_count());
    for (int i = 0; i < tb_workload_count(); i++) {
        const tb_workload_vt *vt = tb_workload_at(i);
        const tb_kind *k = tb_kind_find(vt->kind);
        if (!k) fail_msg("workload %s is not a kind of tiles/kinds.c", vt->kind);
        if (vt->n_ops != k->n_ops) fail_msg("%s: %d ops, the catalog has %d", vt->kind, vt->n_ops, k->n_ops);
        assert_true(vt->n_ops <= TB_MAX_OPS);
        if (vt->op_names != k->op_names) fail_msg("%s: op names not taken from the catalog", vt->kind);
    }
    for (int i = 0; i < tb_kind_count(); i++) {
        const tb_kind *k = tb_kind_at(i);
        if (tb_workload_find(k->name) == NULL) fail_msg("kind %s has no workload", k->name);
    }
    assert_null(tb_workload_at(-1));
    assert_null(tb_workload_at(tb_workload_count()));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(workloads_match_kinds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
