/*-------------------------------------------------------------------------
 *
 * sql_functions.c
 *	  fractam_verify(regclass), fractam_stats(regclass),
 *	  fractam_compression_estimate(regclass, text, int),
 *	  fractam_routing_cache_stats() and fractam_unique_stats().
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xlog.h"
#include "am/index/fractam_index.h"
#include "am/table/fractam_table.h"
#include "catalog/index.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

PG_FUNCTION_INFO_V1(fractam_verify);
PG_FUNCTION_INFO_V1(fractam_stats);
PG_FUNCTION_INFO_V1(fractam_compression_estimate);
PG_FUNCTION_INFO_V1(fractam_table_stats);
PG_FUNCTION_INFO_V1(fractam_routing_cache_stats);
PG_FUNCTION_INFO_V1(fractam_unique_stats);

static Relation
open_fractam_index(Oid indexoid, LOCKMODE lockmode)
{
	Relation	index;
	Oid			heapoid = IndexGetRelation(indexoid, true);

	/* lock the table first, as everything else does */
	if (OidIsValid(heapoid))
		LockRelationOid(heapoid, lockmode);
	index = index_open(indexoid, lockmode);
	if (index->rd_rel->relkind != RELKIND_INDEX ||
		index->rd_rel->relam != fractam_index_am_oid())
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a fractam index",
						RelationGetRelationName(index))));
	if (RELATION_IS_OTHER_TEMP(index))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot access temporary indexes of other sessions")));
	if (!index->rd_index->indisvalid)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("index \"%s\" is not valid",
						RelationGetRelationName(index))));
	return index;
}

static void
close_fractam_index(Relation index, LOCKMODE lockmode)
{
	Oid			heapoid = index->rd_index->indrelid;

	index_close(index, lockmode);
	UnlockRelationOid(heapoid, lockmode);
}

/* A fractam index or table, and its tree */
static Relation
open_fractam_relation(Oid relid, LOCKMODE lockmode, FtTree *tree)
{
	Relation	rel;

	if (get_rel_relkind(relid) == RELKIND_INDEX)
	{
		rel = open_fractam_index(relid, lockmode);
		fractam_index_tree(rel, tree);
		return rel;
	}
	rel = relation_open(relid, lockmode);
	if (!fractam_is_table(rel))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a fractam table or index",
						RelationGetRelationName(rel))));
	if (RELATION_IS_OTHER_TEMP(rel))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot access temporary tables of other sessions")));
	fractam_table_tree(rel, tree);
	return rel;
}

static void
close_fractam_relation(Relation rel, LOCKMODE lockmode)
{
	if (rel->rd_rel->relkind == RELKIND_INDEX)
		close_fractam_index(rel, lockmode);
	else
		relation_close(rel, lockmode);
}

/* fractam_table_stats(regclass): see table_stats.c */
Datum
fractam_table_stats(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Relation	rel;
	FtTree		tree;
	FractamTableCounts c;
	TupleDesc	tupdesc;
	Datum		values[11];
	bool		nulls[11] = {0};

	if (get_rel_relkind(relid) == RELKIND_INDEX)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a fractam table", get_rel_name(relid)),
				 errhint("Use fractam_stats for fractam indexes.")));
	rel = open_fractam_relation(relid, AccessShareLock, &tree);
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	fractam_table_counts(rel, &c);
	relation_close(rel, AccessShareLock);

	values[0] = Int64GetDatum((int64) c.rowids_used);
	values[1] = Int64GetDatum((int64) c.rowids_left);
	values[2] = Int64GetDatum((int64) c.live);
	values[3] = Int64GetDatum((int64) c.dead);
	values[4] = Int64GetDatum((int64) c.recently_dead);
	values[5] = Int64GetDatum((int64) c.in_progress);
	values[6] = Int64GetDatum((int64) c.file_bytes);
	if (c.live > 0)
		values[7] = Float8GetDatum((double) c.file_bytes / c.live);
	else
		nulls[7] = true;
	for (int f = 0; f < 3; f++)
		values[8 + f] = Int64GetDatum((int64) c.forms[f]);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * Check every invariant of the tree; ERROR naming the first broken one.
 * ShareLock keeps writers out, so the whole tree is one consistent state.
 */
Datum
fractam_verify(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);

	/*
	 * A standby cannot take ShareLock; there, verify under AccessShareLock
	 * (the check is then only meaningful while replay is not changing the
	 * index, e.g. once the standby has caught up).
	 */
	LOCKMODE	lockmode = RecoveryInProgress() ? AccessShareLock : ShareLock;
	FtTree		tree;
	Relation	rel = open_fractam_relation(indexoid, lockmode, &tree);

	ft_verify(&tree);
	/* with writers locked out, the visibility map must be exact */
	if (lockmode == ShareLock && rel->rd_rel->relkind != RELKIND_INDEX)
		fractam_vm_verify(rel);
	/* no stored xid or MultiXact older than what pg_class promises */
	if (rel->rd_rel->relkind != RELKIND_INDEX)
		fractam_verify_frozen(rel);
	close_fractam_relation(rel, lockmode);
	PG_RETURN_VOID();
}

/* The composite result of a function with OUT parameters */
static Datum
make_result_row(FunctionCallInfo fcinfo, Datum *values, bool *nulls)
{
	TupleDesc	tupdesc;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	return HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls));
}

Datum
fractam_stats(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	FtTree		tree;
	Relation	rel = open_fractam_relation(indexoid, AccessShareLock, &tree);
	FtStats		st;
	Datum		values[19];
	bool		nulls[19] = {0};

	ft_collect_stats(&tree, &st);
	close_fractam_relation(rel, AccessShareLock);

	values[0] = Int32GetDatum(st.height);
	values[1] = Int64GetDatum(st.leaf_pages);
	values[2] = Int64GetDatum(st.buffer_pages);
	values[3] = Int64GetDatum(st.routing_pages);
	values[4] = Int64GetDatum(st.leaf_items);
	values[5] = Int64GetDatum(st.buffered_messages);
	values[6] = Int64GetDatum(st.buffered_bytes);
	values[7] = Int64GetDatum(st.flushes);
	values[8] = Int64GetDatum(st.splits);
	values[9] = Int64GetDatum(st.free_pages);
	values[10] = Float8GetDatum(st.flushes > 0 ?
								(double) st.flushed_messages / st.flushes : 0.0);
	values[11] = Int64GetDatum(st.upper_buffer_pages);
	values[12] = Int64GetDatum(st.upper_buffered_messages);
	values[13] = Int64GetDatum(st.moves);
	values[14] = Float8GetDatum(st.moves > 0 ?
								(double) st.moved_messages / st.moves : 0.0);
	values[15] = Int64GetDatum(st.compressed_leaf_pages);
	values[16] = Int64GetDatum(st.compressed_leaf_bytes);
	values[17] = Int64GetDatum(st.compressed_leaf_raw_bytes);
	if (st.compressed_leaf_bytes > 0)
		values[18] = Float8GetDatum((double) st.compressed_leaf_raw_bytes /
									st.compressed_leaf_bytes);
	else
		nulls[18] = true;
	PG_RETURN_DATUM(make_result_row(fcinfo, values, nulls));
}

/*
 * What compressing the pages of a fractam index or table with a method
 * and level would save, per page kind (ft_compression_estimate): a row
 * each for leaves, buffer nodes and routing pages.
 */
Datum
fractam_compression_estimate(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	char	   *method;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	static const char *const kinds[FT_EST_KINDS] = {"leaf", "buffer", "routing"};
	FtCodecId	codec;
	int			level;
	int			minlevel;
	int			maxlevel;
	FtTree		tree;
	Relation	rel;
	FtCompressionEstimate est;
	const Size	capacity = BLCKSZ - SizeOfPageHeaderData -
		MAXALIGN(sizeof(FtPageOpaqueData));

	InitMaterializedSRF(fcinfo, 0);
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		return (Datum) 0;
	method = text_to_cstring(PG_GETARG_TEXT_PP(1));
	if (!ft_codec_lookup(method, &codec, &level) || codec == FT_CODEC_NONE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown compression method \"%s\"", method),
				 errhint("Valid methods are \"lz4\" and \"zstd\".")));
	ft_codec_level_range(codec, &minlevel, &maxlevel);
	if (!PG_ARGISNULL(2))
	{
		level = PG_GETARG_INT32(2);
		if (level < minlevel || level > maxlevel)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("compression level %d is out of range for %s",
							level, ft_codec_name(codec)),
					 errdetail("Valid levels are %d to %d.", minlevel, maxlevel)));
	}

	rel = open_fractam_relation(relid, AccessShareLock, &tree);
	ft_compression_estimate(&tree, codec, level, &est);
	close_fractam_relation(rel, AccessShareLock);

	for (int k = 0; k < FT_EST_KINDS; k++)
	{
		Datum		values[7];
		bool		nulls[7] = {0};

		values[0] = CStringGetTextDatum(kinds[k]);
		values[1] = Int64GetDatum(est.pages[k]);
		values[2] = Int64GetDatum(est.items[k]);
		values[3] = Int64GetDatum(est.raw_bytes[k]);
		values[4] = Int64GetDatum(est.compressed_bytes[k]);
		if (est.compressed_bytes[k] > 0)
		{
			values[5] = Float8GetDatum((double) est.raw_bytes[k] /
									   est.compressed_bytes[k]);
			/* "fill to fit": full pages of compressed items */
			values[6] = Float8GetDatum((double) est.compressed_bytes[k] / capacity);
		}
		else
			nulls[5] = nulls[6] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/* Counters of this backend's routing-page cache */
Datum
fractam_routing_cache_stats(PG_FUNCTION_ARGS)
{
	FtRouteCacheStats st;
	Datum		values[4];
	bool		nulls[4] = {0};

	ft_routecache_stats(&st);
	values[0] = Int64GetDatum(st.cached_pages);
	values[1] = Int64GetDatum(st.hits);
	values[2] = Int64GetDatum(st.stores);
	values[3] = Int64GetDatum(st.stale);
	PG_RETURN_DATUM(make_result_row(fcinfo, values, nulls));
}

/* Counters of this backend's inserts into unique fractam indexes */
Datum
fractam_unique_stats(PG_FUNCTION_ARGS)
{
	FractamUniqueStats st;
	Datum		values[3];
	bool		nulls[3] = {0};

	fractam_get_unique_stats(&st);
	values[0] = Int64GetDatum(st.in_descent);
	values[1] = Int64GetDatum(st.searched);
	values[2] = Int64GetDatum(st.waited);
	PG_RETURN_DATUM(make_result_row(fcinfo, values, nulls));
}
