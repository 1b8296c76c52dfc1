/*-------------------------------------------------------------------------
 *
 * table_handler.c
 *	  The fractam table access method's handler: its callbacks.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "am/table/fractam_table.h"
#include "catalog/pg_am.h"
#include "fmgr.h"
#include "utils/guc.h"

PG_FUNCTION_INFO_V1(fractam_table_handler);

double		fractam_debug_first_rowid = 0;

/* The table access method's settings (called from _PG_init) */
void
fractam_table_init(void)
{
	/* redo expands row versions too (ft_item_transform) */
	ft_register_item_transform(FT_TRANSFORM_TABLE_EXPAND, fractam_item_expand);
	DefineCustomRealVariable("fractam.debug_table_first_rowid",
							 "Row id a new or truncated fractam table's file starts at (testing).",
							 "Lets tests run with TID block numbers far beyond the file's pages "
							 "(row id r is TID (r / 291, r % 291 + 1)) or near the row-id limit.",
							 &fractam_debug_first_rowid, 0, 0,
							 (double) (FRACTAM_ROWID_LIMIT - 1),
							 PGC_SUSET, GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);
	DefineCustomIntVariable("fractam.rowid_holdings_per_backend",
							"Tables a session holds a range of row ids of at once.",
							"A session writing to more fractam tables in turn gives up "
							"the rest of a range (up to 290 row ids) each time it "
							"moves to another table.  Costs 16 bytes of shared "
							"memory per connection and table.",
							&fractam_rowid_holdings, 64, 8, 4096,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);
	fractam_table_cache_init();
	fractam_rowid_reuse_init();
	fractam_table_options_init();
}

static Oid
fractam_relation_toast_am(Relation rel)
{
	/* rows keep heap's layout, so heap's toaster and TOAST tables serve */
	return HEAP_TABLE_AM_OID;
}

static const TableAmRoutine fractam_table_methods = {
	.type = T_TableAmRoutine,

	.slot_callbacks = fractam_slot_callbacks,

	.scan_begin = fractam_scan_begin,
	.scan_end = fractam_scan_end,
	.scan_rescan = fractam_scan_rescan,
	.scan_getnextslot = fractam_scan_getnextslot,
	.scan_set_tidrange = fractam_scan_set_tidrange,
	.scan_getnextslot_tidrange = fractam_scan_getnextslot_tidrange,

	.parallelscan_estimate = fractam_parallelscan_estimate,
	.parallelscan_initialize = fractam_parallelscan_initialize,
	.parallelscan_reinitialize = table_block_parallelscan_reinitialize,

	.index_fetch_begin = fractam_index_fetch_begin,
	.index_fetch_reset = fractam_index_fetch_reset,
	.index_fetch_end = fractam_index_fetch_end,
	.index_fetch_tuple = fractam_index_fetch_tuple,

	.tuple_fetch_row_version = fractam_tuple_fetch_row_version,
	.tuple_tid_valid = fractam_tuple_tid_valid,
	.tuple_get_latest_tid = fractam_tuple_get_latest_tid,
	.tuple_satisfies_snapshot = fractam_tuple_satisfies_snapshot,
	.index_delete_tuples = fractam_index_delete_tuples,

	.tuple_insert = fractam_tuple_insert,
	.tuple_insert_speculative = fractam_tuple_insert_speculative,
	.tuple_complete_speculative = fractam_tuple_complete_speculative,
	.multi_insert = fractam_multi_insert,
	.tuple_delete = fractam_tuple_delete,
	.tuple_update = fractam_tuple_update,
	.tuple_lock = fractam_tuple_lock,
	.finish_bulk_insert = fractam_finish_bulk_insert,

	.relation_set_new_filenode = fractam_relation_set_new_filenode,
	.relation_nontransactional_truncate = fractam_relation_nontransactional_truncate,
	.relation_copy_data = fractam_relation_copy_data,
	.relation_copy_for_cluster = fractam_relation_copy_for_cluster,
	.relation_vacuum = fractam_relation_vacuum,
	.scan_analyze_next_block = fractam_scan_analyze_next_block,
	.scan_analyze_next_tuple = fractam_scan_analyze_next_tuple,
	.index_build_range_scan = fractam_index_build_range_scan,
	.index_validate_scan = fractam_index_validate_scan,

	.relation_size = fractam_relation_size,
	.relation_needs_toast_table = fractam_relation_needs_toast_table,
	.relation_toast_am = fractam_relation_toast_am,
	.relation_fetch_toast_slice = NULL,

	.relation_estimate_size = fractam_relation_estimate_size,

	.scan_bitmap_next_block = fractam_scan_bitmap_next_block,
	.scan_bitmap_next_tuple = fractam_scan_bitmap_next_tuple,
	.scan_sample_next_block = fractam_scan_sample_next_block,
	.scan_sample_next_tuple = fractam_scan_sample_next_tuple
};

Datum
fractam_table_handler(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(&fractam_table_methods);
}

/* Is rel a fractam table? */
bool
fractam_is_table(Relation rel)
{
	return rel->rd_tableam == &fractam_table_methods;
}
