/*-------------------------------------------------------------------------
 *
 * table_stats.c
 *	  What a fractam table holds: row ids used and left, versions by state
 *	  and by stored form, bytes per row (SQL: fractam_table_stats).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "am/table/fractam_table.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/procarray.h"
#include "storage/smgr.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

/*
 * Count the table's versions (a full read of the tree, as pgstattuple
 * reads a heap): live ones, dead ones (deleted or updated by a committed
 * transaction, removable by VACUUM or soon), and those whose insert or
 * delete is still in progress.
 */
void
fractam_table_counts(Relation rel, FractamTableCounts *counts)
{
	FtTree		tree;
	FtScan		scan;
	const char *item;
	Size		len;
	TransactionId oldest = GetOldestNonRemovableTransactionId(rel);

	memset(counts, 0, sizeof(*counts));
	/* handed out and not given back by VACUUM for reuse */
	counts->rowids_used = fractam_rowids_in_use(rel);
	counts->rowids_left = FRACTAM_ROWID_LIMIT - counts->rowids_used;
	counts->file_bytes = (uint64) smgrnblocks(RelationGetSmgr(rel), MAIN_FORKNUM) *
		BLCKSZ;

	fractam_table_tree(rel, &tree);
	scan = ft_scan_begin(&tree);
	ft_scan_set_keep_pins(scan, false);
	ft_scan_seek(scan, NULL, 0, true);
	while (ft_scan_next(scan, &item, &len))
	{
		TransactionId dead_after;
		FractamHeaderCopy hbuf;

		CHECK_FOR_INTERRUPTS();
		if (fractam_item_is_deadset(item, len))
		{
			/* pruned versions, dead until VACUUM cleans their index entries */
			counts->dead += fractam_deadset_count(item);
			continue;
		}
		if (fractam_item_form(item) < lengthof(counts->forms))
			counts->forms[fractam_item_form(item)]++;
		switch (fractam_tuple_htsv(fractam_item_header(rel, item, &hbuf),
								   &dead_after))
		{
			case HEAPTUPLE_LIVE:
				counts->live++;
				break;
			case HEAPTUPLE_DEAD:
				counts->dead++;
				break;
			case HEAPTUPLE_RECENTLY_DEAD:
				if (TransactionIdPrecedes(dead_after, oldest))
					counts->dead++;
				else
					counts->recently_dead++;
				break;
			case HEAPTUPLE_INSERT_IN_PROGRESS:
			case HEAPTUPLE_DELETE_IN_PROGRESS:
				counts->in_progress++;
				break;
		}
	}
	ft_scan_end(scan);
}
