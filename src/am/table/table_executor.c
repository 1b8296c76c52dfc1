/*-------------------------------------------------------------------------
 *
 * table_executor.c
 *	  Executor adjustments for fractam tables: no bitmap heap scan prefetch.
 *
 * A bitmap heap scan prefetches the heap blocks its bitmap names with
 * PrefetchBuffer on the table's main fork.  A fractam table's TID blocks are
 * pseudo-blocks of row ids, not pages of its file: prefetching file page b
 * for TID block b reads an unrelated tree page (wasted I/O and buffer
 * space), and once row ids pass 1 GB worth of TID blocks (about 38 million
 * row versions) while the file is smaller, md.c refuses the read of a
 * segment that does not exist ("previous segment is only N blocks") and the
 * query fails.  The table AM has no say in prefetching, so right after
 * ExecutorStart (src/am/executor_hook.c) every bitmap heap scan of a
 * fractam table gets a prefetch
 * distance of zero (the scan reads its rows through the tree, which finds
 * each leaf once per pseudo-block anyway).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "am/table/fractam_table.h"
#include "executor/executor.h"
#include "nodes/execnodes.h"
#include "nodes/nodeFuncs.h"

static bool
disable_prefetch(PlanState *ps, void *context)
{
	if (ps == NULL)
		return false;
	if (IsA(ps, BitmapHeapScanState))
	{
		BitmapHeapScanState *bhs = (BitmapHeapScanState *) ps;
		Relation	rel = bhs->ss.ss_currentRelation;

		if (rel && fractam_is_table(rel))
			bhs->prefetch_maximum = 0;
	}
	return planstate_tree_walker(ps, disable_prefetch, context);
}

/* Called right after ExecutorStart (src/am/executor_hook.c) */
void
fractam_table_prepare_plan(QueryDesc *queryDesc)
{
	ListCell   *lc;

	disable_prefetch(queryDesc->planstate, NULL);
	/* CTEs and other subplans started with the query */
	foreach(lc, queryDesc->estate->es_subplanstates)
		disable_prefetch((PlanState *) lfirst(lc), NULL);
}
