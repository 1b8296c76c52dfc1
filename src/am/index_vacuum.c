/*-------------------------------------------------------------------------
 *
 * index_vacuum.c
 *	  ambulkdelete / amvacuumcleanup.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "am/fractam_index.h"
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

static bool
keep_all(const char *item, Size len, void *arg)
{
	return false;
}

IndexBulkDeleteResult *
fractam_vacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	if (info->analyze_only)
		return stats;

	/* make pages this VACUUM freed findable by the FSM searches */
	IndexFreeSpaceMapVacuum(info->index);

	/* no bulk delete this time: count the entries with a read-only pass */
	if (stats == NULL)
	{
		FtTree		tree;
		FtVacuumResult res;

		stats = palloc0(sizeof(IndexBulkDeleteResult));
		fractam_index_tree(info->index, &tree);
		ft_vacuum(&tree, keep_all, NULL, &res);
		stats->num_pages = res.num_pages;
		stats->num_index_tuples = res.num_items;
		stats->estimated_count = false;
	}
	return stats;
}
