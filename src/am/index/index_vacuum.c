/*-------------------------------------------------------------------------
 *
 * index_vacuum.c
 *	  ambulkdelete / amvacuumcleanup.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

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
vacuum_item(const char *item, Size len, void *arg)
{
	VacuumCallbackState *vs = (VacuumCallbackState *) arg;
	IndexTuple	itup = (IndexTuple) item;

	return vs->callback(&itup->t_tid, vs->callback_state);
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
	ft_vacuum(&tree, vacuum_item, &vs, &res);

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
