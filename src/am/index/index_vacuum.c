/*-------------------------------------------------------------------------
 *
 * index_vacuum.c
 *	  ambulkdelete / amvacuumcleanup, and the removal of entries found
 *	  dead outside VACUUM (unique inserts, index scans).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tableam.h"
#include "am/fractam.h"
#include "am/index/fractam_index.h"
#include "commands/vacuum.h"
#include "storage/indexfsm.h"
#include "utils/rel.h"

typedef struct VacuumCallbackState
{
	IndexBulkDeleteCallback callback;
	void	   *callback_state;
} VacuumCallbackState;

static bool
vacuum_item(const char *item, Size len, void *arg, FtVacuumPatch *patch)
{
	VacuumCallbackState *vs = (VacuumCallbackState *) arg;
	IndexTuple	itup = (IndexTuple) item;

	return vs->callback(&itup->t_tid, vs->callback_state);
}

/*
 * The tree's FtUniquePruneFn (arg: a FractamPruneTarget): of the entries
 * found dead (by a unique insert's check, or an index scan's
 * kill_prior_tuple), the table AM confirms which may go and the newest xid
 * their removal hides from hot-standby queries, as for nbtree's simple
 * deletion (table_index_delete_tuples; called under the index leaf's lock,
 * as nbtree does).  Without this, a unique index on a table without update
 * chains (a fractam table) gains one entry per UPDATE of a row, and every
 * later UPDATE of it checks them all until VACUUM.
 */
FullTransactionId
fractam_prune_entries(void *arg, const char **items, const Size *lens, int n,
					  bool *remove)
{
	FractamPruneTarget *target = (FractamPruneTarget *) arg;
	TM_IndexDeleteOp op;
	TransactionId latest;
	int			i;

	Size		total = 0;

	/*
	 * Bottom-up mode: the table AM checks the most promising table blocks
	 * first and stops once enough is freed (heap reads at most a few
	 * blocks, under the index leaf's lock); simple mode would check every
	 * entry and, for heap, expects some of them to be known dead already.
	 */
	for (i = 0; i < n; i++)
		total += lens[i];
	op.irel = target->index;
	op.iblknum = InvalidBlockNumber;
	op.bottomup = true;
	op.bottomupfreespace = (int) Min(target->freespace > 0 ?
									 target->freespace : total, total);
	op.ndeltids = n;
	op.deltids = palloc(n * sizeof(TM_IndexDelete));
	op.status = palloc(n * sizeof(TM_IndexStatus));
	for (i = 0; i < n; i++)
	{
		op.deltids[i].tid = ((IndexTuple) items[i])->t_tid;
		op.deltids[i].id = i;
		op.status[i].idxoffnum = InvalidOffsetNumber;
		op.status[i].knowndeletable = false;
		op.status[i].promising = true;
		op.status[i].freespace = (int16) lens[i];
	}
	latest = table_index_delete_tuples(target->heap, &op);
	for (i = 0; i < n; i++)
		remove[i] = op.status[i].knowndeletable;
	pfree(op.deltids);
	pfree(op.status);
	return TransactionIdIsValid(latest) ? fractam_full_xid(latest) :
		InvalidFullTransactionId;
}

IndexBulkDeleteResult *
fractam_bulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
				   IndexBulkDeleteCallback callback, void *callback_state)
{
	FtTree		tree;
	VacuumCallbackState vs;
	FtVacuumResult res;

	if (stats == NULL)
		stats = palloc0(sizeof(IndexBulkDeleteResult));
	vs.callback = callback;
	vs.callback_state = callback_state;
	fractam_index_tree(info->index, &tree);
	/* through VACUUM's ring, as nbtree's scan (see ft_vacuum.c) */
	tree.strategy = info->strategy;
	ft_vacuum(&tree, vacuum_item, NULL, &vs, &res);

	stats->num_pages = res.num_pages;
	stats->num_index_tuples = res.num_items;
	stats->tuples_removed += res.items_removed;
	stats->pages_newly_deleted += res.pages_deleted;
	stats->pages_deleted += res.pages_deleted;
	stats->estimated_count = false;
	return stats;
}

IndexBulkDeleteResult *
fractam_vacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	if (info->analyze_only)
		return stats;

	/*
	 * No bulk delete ran in this VACUUM (typically autovacuum of an
	 * insert-mostly table, which skips index vacuuming): nothing was deleted
	 * and no page was freed, so there is nothing to clean up.  Like nbtree,
	 * return NULL rather than reading the whole index just to count its
	 * entries; such a pass would evict the working set of the inserters and
	 * hold cleanup locks on every buffer node.
	 */
	if (stats == NULL)
		return NULL;

	/* make pages this VACUUM freed findable by the FSM searches */
	IndexFreeSpaceMapVacuum(info->index);
	return stats;
}
