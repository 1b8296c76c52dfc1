/*-------------------------------------------------------------------------
 *
 * speculative.c
 *	  Let INSERT ... ON CONFLICT use fractam unique indexes (PostgreSQL 15).
 *
 * PostgreSQL 15's BuildSpeculativeIndexInfo (catalog/index.c) refuses any
 * unique index that is not btree, and the executor calls it, through
 * ExecOpenIndices, for every unique index of the target table of an
 * INSERT ... ON CONFLICT when it inserts the first row.  fractam unique
 * indexes provide everything speculative insertion needs (btree strategy
 * numbers, amgettuple for the arbiter pre-check, UNIQUE_CHECK_PARTIAL), so
 * right after ExecutorStart (src/am/executor_hook.c) we open the target's
 * indexes ourselves with
 * ExecOpenIndices while the relcache entries of its fractam unique indexes
 * report btree as their access method, and restore them immediately.
 * Nothing else runs in that window; the executor then finds the indexes
 * already open.  Rows routed to partitions open their indexes later, so
 * partitions with fractam unique indexes are not covered (see README).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "am/index/fractam_index.h"
#include "catalog/pg_am.h"
#include "commands/defrem.h"
#include "executor/executor.h"
#include "nodes/execnodes.h"
#include "nodes/plannodes.h"
#include "utils/rel.h"

static void
open_indexes_for_speculative(ResultRelInfo *rri)
{
	Relation	rel = rri->ri_RelationDesc;
	List	   *indexes;
	ListCell   *lc;
	List	   *disguised = NIL;
	Oid			amoid;

	if (!rel->rd_rel->relhasindex || rri->ri_IndexRelationDescs != NULL)
		return;
	amoid = get_index_am_oid(FRACTAM_INDEX_AM_NAME, true);
	if (!OidIsValid(amoid))
		return;

	indexes = RelationGetIndexList(rel);
	foreach(lc, indexes)
	{
		Relation	index = index_open(lfirst_oid(lc), RowExclusiveLock);

		if (index->rd_rel->relam == amoid && index->rd_index->indisunique)
			disguised = lappend(disguised, index);
		else
			index_close(index, NoLock);
	}
	list_free(indexes);
	if (disguised == NIL)
		return;

	PG_TRY();
	{
		foreach(lc, disguised)
			((Relation) lfirst(lc))->rd_rel->relam = BTREE_AM_OID;
		ExecOpenIndices(rri, true);
	}
	PG_FINALLY();
	{
		foreach(lc, disguised)
		{
			Relation	index = (Relation) lfirst(lc);

			index->rd_rel->relam = amoid;
			index_close(index, NoLock);
		}
	}
	PG_END_TRY();
}

static void
prepare_modify_table(PlanState *ps)
{
	ModifyTableState *mtstate;
	ModifyTable *node;
	int			i;

	if (ps == NULL || !IsA(ps, ModifyTableState))
		return;
	mtstate = (ModifyTableState *) ps;
	node = (ModifyTable *) ps->plan;
	if (node->operation != CMD_INSERT || node->onConflictAction == ONCONFLICT_NONE)
		return;
	for (i = 0; i < mtstate->mt_nrels; i++)
		open_indexes_for_speculative(&mtstate->resultRelInfo[i]);
}

/* Called right after ExecutorStart (src/am/executor_hook.c) */
void
fractam_speculative_prepare(QueryDesc *queryDesc)
{
	ListCell   *lc;

	prepare_modify_table(queryDesc->planstate);
	foreach(lc, queryDesc->estate->es_auxmodifytables)
		prepare_modify_table((PlanState *) lfirst(lc));
}
