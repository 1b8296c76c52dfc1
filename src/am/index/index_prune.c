/*-------------------------------------------------------------------------
 *
 * index_prune.c
 *	  A full leaf of a fractam index drops the entries of rows dead to
 *	  everyone before an UPDATE that left the key alone splits it.
 *
 * An UPDATE that does not change an index's key still adds an entry to it
 * when the table keeps no update chain behind one entry (every fractam
 * table; heap when the update is not HOT), so a row updated over and over
 * leaves a run of entries with its key, all but the newest pointing to
 * versions that die soon.  nbtree meets this with bottom-up deletion when
 * such an insert would split a page; fractam does the same through the
 * tree's leaf_prune_hook (src/ft/ft_prune.c), armed only for inserts the
 * executor marks indexUnchanged: the entries whose key repeats on the leaf
 * (the runs that version churn builds) are checked by the table AM
 * (table_index_delete_tuples, under the leaf's lock as nbtree does, through
 * fractam_prune_entries), and those of rows dead to everyone go, with the
 * hot-standby horizon the table AM returns.  If that frees too little the
 * leaf splits as it would have.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/itup.h"
#include "am/index/fractam_index.h"

/* FtTree's leaf_prune_hook of an index (prune_arg: a FractamPruneTarget) */
bool
fractam_index_leaf_prune(FtTree *tree, char **items, Size *lens, int nitems,
						 bool rightmost, FtLeafPrune *prune)
{
	FractamIndexState *state = (FractamIndexState *) tree->cmp_arg;
	const char **cand = palloc(nitems * sizeof(char *));
	Size	   *candlens = palloc(nitems * sizeof(Size));
	int		   *candpos = palloc(nitems * sizeof(int));
	bool	   *remove = palloc(nitems * sizeof(bool));
	bool		prev_equal = false;
	int			ncand = 0;
	FullTransactionId horizon;

	/* the entries whose key another entry of the leaf has too */
	for (int i = 0; i < nitems; i++)
	{
		bool		next_equal = i + 1 < nitems &&
			fractam_compare_keys(state, (IndexTuple) items[i],
								 (IndexTuple) items[i + 1]) == 0;

		if (prev_equal || next_equal)
		{
			cand[ncand] = items[i];
			candlens[ncand] = lens[i];
			candpos[ncand++] = i;
		}
		prev_equal = next_equal;
	}
	if (ncand == 0)
	{
		pfree(cand);
		pfree(candlens);
		pfree(candpos);
		pfree(remove);
		return false;
	}

	memset(remove, 0, ncand * sizeof(bool));
	horizon = fractam_prune_entries(tree->prune_arg, cand, candlens, ncand,
									remove);
	prune->dead = palloc(ncand * sizeof(int));
	prune->ndead = 0;
	for (int k = 0; k < ncand; k++)
		if (remove[k])
			prune->dead[prune->ndead++] = candpos[k];
	prune->nnew = 0;
	prune->horizon = horizon;
	pfree(cand);
	pfree(candlens);
	pfree(candpos);
	pfree(remove);
	return prune->ndead > 0;
}
