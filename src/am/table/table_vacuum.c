/*-------------------------------------------------------------------------
 *
 * table_vacuum.c
 *	  VACUUM of fractam tables: dead versions leave the tree and their
 *	  index entries go.
 *
 * One pass of ft_vacuum over the tree collects the TID of every version
 * dead to all transactions (xmax committed before the oldest snapshot, or
 * an aborted insertion); each index's bulk delete drops the entries
 * pointing to those TIDs; then a second pass removes the versions, as
 * heap keeps LP_DEAD stubs until its indexes are clean: an index entry
 * never outlives its version across a crash, which the visibility map
 * relies on (an index-only scan of an all-visible pseudo-block trusts
 * every entry).  When maintenance_work_mem fills with TIDs, the pass
 * stops collecting, the indexes and the table are cleaned, and another
 * pass follows.
 *
 * The same pass freezes what is old enough (table_freeze.c), in place in
 * the leaf under the same cleanup lock (one XLOG_FT_PATCHES record per
 * leaf).  relfrozenxid and relminmxid then advance to the oldest
 * transaction and MultiXact still stored in the table after freezing
 * (never further): the pass reads every version but those of all-frozen
 * ranges.  A VACUUM that need not advance them (not aggressive) skips
 * all-visible ranges too, as heap skips all-visible pages, and leaves them
 * where they are if it skipped a version that is not frozen.  Unlike heap's,
 * a MultiXact some of whose members still run is not rebuilt: it stays,
 * and it and all its members hold relminmxid and relfrozenxid back until
 * a VACUUM after they end.
 *
 * Before a pass removes anything, a hot standby is told the horizon of
 * what may be removed (OldestXmin - 1 bounds the xmax of every removed
 * version), so standby queries that could still see them are cancelled.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/genam.h"
#include "access/multixact.h"
#include "access/transam.h"
#include "access/visibilitymap.h"
#include "access/xact.h"
#include "am/fractam.h"
#include "am/table/fractam_table.h"
#include "commands/dbcommands.h"
#include "commands/progress.h"
#include "commands/vacuum.h"
#include "executor/instrument.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/autovacuum.h"
#include "storage/bufmgr.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/pg_rusage.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

typedef struct VacuumPassState
{
	Relation	rel;
	Buffer		vmbuf;			/* a visibility-map page, for skipping */
	TransactionId oldest_xmin;
	TransactionId freeze_limit; /* xids before it are frozen or cleared */
	double		frozen;			/* versions changed by freezing */
	double		skipped_rowids; /* row ids of the ranges skipped */
	FtRowId		first_rowid;	/* the table's first, for counting them */
	VacDeadItems *dead;			/* TIDs removed in this pass */
	bool		overflowed;		/* dead versions left for the next pass */
	double		live;
	double		removed;
	double		recently_dead;
	double		pruned_left;	/* row ids of dead sets the pass left (pruned
								 * after it collected) */
	TransactionId min_xid;		/* oldest xid still stored */
	MultiXactId min_multi;		/* oldest MultiXact still stored */
	uint8		skip_flags;		/* visibility-map bits of ranges to skip */
	bool		collecting;		/* the first pass (not remove_collected) */
	bool		skipped_unfrozen;	/* skipped a range not all-frozen */
	double		left_pinned;	/* collected dead versions left in leaves a
								 * scan pinned (remove_collected) */
} VacuumPassState;

/* The bytes of a version's header that freezing changed, as a patch */
static void
freeze_patch(HeapTupleHeader hdr, HeapTupleHeader frz, FtVacuumPatch *patch)
{
	const char *a = (const char *) hdr;
	const char *b = (const char *) frz;
	int			first = 0;
	int			last = SizeofHeapTupleHeader - 1;

	while (first < last && a[first] == b[first])
		first++;
	while (last > first && a[last] == b[last])
		last--;
	StaticAssertStmt(SizeofHeapTupleHeader <= FT_VACUUM_MAX_PATCH,
					 "a version's header must fit a patch");
	patch->start = FRACTAM_ROWID_SIZE + first;
	patch->len = last - first + 1;
	memcpy(patch->bytes, b + first, patch->len);
}

/*
 * The row ids of a dead set (versions a full leaf dropped, table_prune.c):
 * all of them, or none if they do not all fit (the next pass takes them).
 */
static void
collect_deadset(VacuumPassState *st, const char *item)
{
	FtRowId		base = fractam_item_rowid(item);
	int			n = fractam_deadset_count(item);

	if (st->dead->num_items + n > st->dead->max_items)
	{
		st->overflowed = true;
		return;
	}
	for (int b = 0; b < FRACTAM_DEADSET_ROWS; b++)
		if (fractam_deadset_has(item, b))
			fractam_rowid_tid(base + b,
							  &st->dead->items[st->dead->num_items++]);
	st->removed += n;
}

/*
 * ft_vacuum's callback of the first pass: is this version to be removed?
 * A version that stays may be frozen (patch).
 */
static bool
vacuum_version(const char *item, Size len, void *arg, FtVacuumPatch *patch)
{
	VacuumPassState *st = (VacuumPassState *) arg;
	HeapTupleHeader hdr;
	TransactionId dead_after;
	HTSV_Result res;
	FractamHeaderCopy frz;
	FractamHeaderCopy hbuf;

	if (fractam_item_is_deadset(item, len))
	{
		collect_deadset(st, item);
		return false;
	}
	hdr = fractam_item_header(st->rel, item, &hbuf);
	res = fractam_tuple_htsv(hdr, &dead_after);
	if (res == HEAPTUPLE_RECENTLY_DEAD &&
		TransactionIdPrecedes(dead_after, st->oldest_xmin))
		res = HEAPTUPLE_DEAD;
	if (res == HEAPTUPLE_DEAD)
	{
		if (st->dead->num_items < st->dead->max_items)
		{
			/* removed once the indexes have lost their entries for it */
			fractam_rowid_tid(fractam_item_rowid(item),
							  &st->dead->items[st->dead->num_items++]);
			st->removed += 1;
			return false;
		}
		st->overflowed = true;
	}
	else if (res == HEAPTUPLE_RECENTLY_DEAD)
		st->recently_dead += 1;
	else
		st->live += 1;

	if (fractam_item_form(item) != FRACTAM_ITEM_FULL)
	{
		/* settled: frozen already; compact: its freeze bit */
		if (patch && res != HEAPTUPLE_DEAD &&
			fractam_item_form(item) == FRACTAM_ITEM_COMPACT &&
			fractam_item_freeze_patch(item, st->freeze_limit, patch))
		{
			HeapTupleHeaderSetXminFrozen(hdr);	/* hbuf, a copy */
			st->frozen += 1;
		}
	}
	else if (patch && res != HEAPTUPLE_DEAD &&
			 fractam_freeze_header(st->freeze_limit, hdr, &frz.hdr))
	{
		freeze_patch(hdr, &frz.hdr, patch);
		st->frozen += 1;
		hdr = &frz.hdr;
	}

	/* what stays: its xids bound relfrozenxid, its multi relminmxid */
	fractam_note_oldest(hdr, &st->min_xid, &st->min_multi);
	return false;
}

static int
tid_cmp(const void *a, const void *b)
{
	return ItemPointerCompare((ItemPointer) a, (ItemPointer) b);
}

/* index bulk delete callback: is this TID removed? (items are sorted) */
static bool
tid_removed(ItemPointer itemptr, void *state)
{
	VacDeadItems *dead = (VacDeadItems *) state;

	return bsearch(itemptr, dead->items, dead->num_items,
				   sizeof(ItemPointerData), tid_cmp) != NULL;
}

/*
 * ft_vacuum's callback of the second pass: remove the collected versions.
 * patch NULL: the leaf is only read, a scan pins it (see
 * FtTree.vacuum_skip_pinned): what would go stays, and is counted.
 */
static bool
remove_collected(const char *item, Size len, void *arg, FtVacuumPatch *patch)
{
	VacuumPassState *st = (VacuumPassState *) arg;
	ItemPointerData tid;

	if (fractam_item_is_deadset(item, len))
	{
		FtRowId		base = fractam_item_rowid(item);
		uint8		bits[FRACTAM_DEADSET_ROWS / 8];
		bool		left = false;
		int			cleared = 0;

		/* clear the bits of the collected row ids; the set goes if all do */
		memcpy(bits, item + FRACTAM_ROWID_SIZE, sizeof(bits));
		for (int b = 0; b < FRACTAM_DEADSET_ROWS; b++)
		{
			if (!fractam_deadset_has(item, b))
				continue;
			fractam_rowid_tid(base + b, &tid);
			if (tid_removed(&tid, st->dead))
			{
				bits[b / 8] &= (uint8) ~(1 << (b % 8));
				cleared++;
			}
			else
				left = true;
		}
		if (patch == NULL)
		{
			/* only read: the set stays whole */
			st->left_pinned += cleared;
			left = true;
		}
		if (!left)
			return true;
		st->pruned_left += pg_popcount((const char *) bits, sizeof(bits));
		if (cleared > 0 && patch)
		{
			StaticAssertStmt(sizeof(bits) <= FT_VACUUM_MAX_PATCH,
							 "a dead set's bitmap fits a patch");
			patch->start = FRACTAM_ROWID_SIZE;
			patch->len = sizeof(bits);
			memcpy(patch->bytes, bits, sizeof(bits));
		}
		return false;
	}
	fractam_rowid_tid(fractam_item_rowid(item), &tid);
	if (!tid_removed(&tid, st->dead))
		return false;
	if (patch == NULL)
	{
		FractamHeaderCopy hbuf;

		/* only read: it stays, and its xids bound relfrozenxid */
		st->left_pinned += 1;
		fractam_note_oldest(fractam_item_header(st->rel, item, &hbuf),
							&st->min_xid, &st->min_multi);
		return false;
	}
	return true;
}

/*
 * FtTree.vacuum_pinned_readable of an aggressive VACUUM, which must leave
 * nothing older than its freeze limit: a leaf a scan pins may be only read
 * if no version there stores an xid before the limit (nothing to freeze or
 * clear, nothing dead that would hold relfrozenxid back) nor a MultiXact
 * (which a cleanup might clear).  Else VACUUM waits for the leaf, as
 * heap's aggressive VACUUM waits for a page with a tuple that would freeze
 * (heap_tuple_would_freeze).
 */
static bool
pinned_version_readable(const char *item, Size len, void *arg)
{
	VacuumPassState *st = (VacuumPassState *) arg;
	FractamHeaderCopy hbuf;
	HeapTupleHeader hdr;
	TransactionId oldest = st->oldest_xmin;
	MultiXactId multi = InvalidMultiXactId;

	if (fractam_item_is_deadset(item, len))
		return true;			/* row ids only, no xid */
	hdr = fractam_item_header(st->rel, item, &hbuf);
	if (!(hdr->t_infomask & HEAP_XMAX_INVALID) &&
		(hdr->t_infomask & HEAP_XMAX_IS_MULTI))
		return false;
	fractam_note_oldest(hdr, &oldest, &multi);
	return !TransactionIdPrecedes(oldest, st->freeze_limit);
}

/*
 * ft_vacuum's skip callback (both passes): the leaves holding row ids
 * [lo, hi) have nothing to remove if every pseudo-block of the range is
 * marked all-visible, and nothing to freeze and no xid relfrozenxid must
 * wait for if they are all marked all-frozen.  A writer clears a
 * pseudo-block's bits before it changes a version there, and a change
 * made after this look is too new for this VACUUM to remove or freeze (its
 * xid is not before OldestXmin).  An aggressive VACUUM (one that must
 * advance relfrozenxid) skips only all-frozen ranges; any other skips
 * all-visible ones too, as heap skips its all-visible pages, and then
 * leaves relfrozenxid where it is if one of them was not all-frozen.  The
 * open end of the table is always read.
 */
static bool
skip_marked(const char *lo, Size lolen, const char *hi, Size hilen,
			void *arg)
{
	VacuumPassState *st = (VacuumPassState *) arg;
	FtRowId		first;
	FtRowId		end;

	if (hi == NULL)
		return false;
	Assert(hilen >= FRACTAM_ROWID_SIZE &&
		   (lo == NULL || lolen >= FRACTAM_ROWID_SIZE));
	first = lo ? fractam_item_rowid(lo) : st->first_rowid;
	end = fractam_item_rowid(hi);
	if (!fractam_vm_range_marked(st->rel, first, end, st->skip_flags,
								 &st->vmbuf))
		return false;
	/*
	 * (Only the collecting pass counts: the second may see narrower ranges
	 * after splits, all-visible inside what the first pass read.)
	 */
	if (st->collecting && st->skip_flags != VISIBILITYMAP_ALL_FROZEN &&
		!fractam_vm_range_marked(st->rel, first, end, VISIBILITYMAP_ALL_FROZEN,
								 &st->vmbuf))
		st->skipped_unfrozen = true;
	if (st->collecting)
		st->skipped_rowids += end - first;
	return true;
}

static void
fill_vacuum_info(IndexVacuumInfo *ivinfo, Relation index, bool estimated,
				 int elevel, double num_heap_tuples,
				 BufferAccessStrategy bstrategy)
{
	ivinfo->index = index;
	ivinfo->analyze_only = false;
	ivinfo->report_progress = false;
	ivinfo->estimated_count = estimated;
	ivinfo->message_level = elevel;
	ivinfo->num_heap_tuples = num_heap_tuples;
	ivinfo->strategy = bstrategy;
}

void
fractam_relation_vacuum(Relation rel, struct VacuumParams *params,
						BufferAccessStrategy bstrategy)
{
	int			elevel = (params->options & VACOPT_VERBOSE) ? INFO : DEBUG2;
	TransactionId oldest_xmin;
	MultiXactId oldest_mxact;
	TransactionId freeze_limit;
	MultiXactId multi_cutoff;
	Relation   *indrels;
	int			nindexes;
	IndexBulkDeleteResult **istats;
	VacuumPassState st;
	FtTree		tree;
	FtVacuumResult fres;
	BlockNumber compressed = 0;
	int			max_items;
	int			passes = 0;
	int			i;
	bool		frozenxid_updated;
	bool		minmulti_updated;
	double		total_removed = 0;
	BlockNumber all_visible;
	BlockNumber nblocks;
	BlockNumber skipped = 0;	/* leaves the last first pass skipped */
	double		skipped_rowids = 0;
	double		live;
	bool		aggressive;
	FtVacuumSkipFn skip;
	FractamRowidGaps *gaps;
	uint64		rowids_given_back;
	/* autovacuum's log_autovacuum_min_duration, as heap's VACUUM logs */
	bool		log_auto = IsAutoVacuumWorkerProcess() &&
		params->log_min_duration >= 0;
	TimestampTz starttime = 0;
	PGRUsage	ru0;
	WalUsage	walusage_start = pgWalUsage;
	char	   *detail;

	fractam_flush_kept_rows_if(rel);
	if (log_auto)
	{
		pg_rusage_init(&ru0);
		starttime = GetCurrentTimestamp();
	}
	pgstat_progress_start_command(PROGRESS_COMMAND_VACUUM,
								  RelationGetRelid(rel));
	aggressive = vacuum_set_xid_limits(rel, params->freeze_min_age,
									   params->freeze_table_age,
									   params->multixact_freeze_min_age,
									   params->multixact_freeze_table_age,
									   &oldest_xmin, &oldest_mxact,
									   &freeze_limit, &multi_cutoff);
	if (OldSnapshotThresholdActive())
	{
		/*
		 * fractam tables do not take part in old_snapshot_threshold: its
		 * horizon would remove versions old snapshots still see, and
		 * fractam's readers do not raise "snapshot too old".  Keep what
		 * every snapshot needs, as without the setting.
		 */
		oldest_xmin = GetOldestNonRemovableTransactionId(rel);
		if (TransactionIdFollows(freeze_limit, oldest_xmin))
			freeze_limit = oldest_xmin;
	}

	vac_open_indexes(rel, RowExclusiveLock, &nindexes, &indrels);
	/* indexes are vacuumed one after the other (as heap's temp tables) */
	if (params->nworkers > 0 && nindexes > 1 && RelationUsesLocalBuffers(rel))
		ereport(WARNING,
				(errmsg("disabling parallel option of vacuum on \"%s\" --- cannot vacuum temporary tables in parallel",
						RelationGetRelationName(rel))));
	istats = palloc0(sizeof(IndexBulkDeleteResult *) * Max(nindexes, 1));

	max_items = (int) Min((Size) maintenance_work_mem * 1024L / sizeof(ItemPointerData),
						  (Size) (MaxAllocSize - offsetof(VacDeadItems, items)) / sizeof(ItemPointerData));
	max_items = Max(max_items, MaxHeapTuplesPerPage);

	memset(&st, 0, sizeof(st));
	st.rel = rel;
	st.vmbuf = InvalidBuffer;
	st.first_rowid = fractam_rowid_first(rel);
	st.oldest_xmin = oldest_xmin;
	st.freeze_limit = freeze_limit;
	st.dead = palloc(vac_max_items_to_alloc_size(max_items));
	st.dead->max_items = max_items;
	st.left_pinned = 0;
	/* what may be skipped (skip_marked); DISABLE_PAGE_SKIPPING: nothing */
	if (params->options & VACOPT_DISABLE_PAGE_SKIPPING)
		st.skip_flags = 0;
	else if (aggressive)
		st.skip_flags = VISIBILITYMAP_ALL_FROZEN;
	else
		st.skip_flags = VISIBILITYMAP_ALL_VISIBLE;
	skip = st.skip_flags != 0 ? skip_marked : NULL;

	fractam_table_tree(rel, &tree);
	/* leaves go through VACUUM's ring, as heap's pages do */
	tree.strategy = bstrategy;
	/* leaves it compresses settle their versions (fractam_leaf_prune) */
	if (tree.codec != FT_CODEC_NONE)
		(void) fractam_table_compact_forms(rel);

	/*
	 * A leaf a scan pins (a cursor stopped in it) is not waited for: it is
	 * only read, as heap's VACUUM reads a page whose cleanup lock it cannot
	 * get (lazy_scan_noprune).  Its versions are counted, dead ones are
	 * collected (their index entries go) but stay, and nothing is frozen
	 * there: the xids of all that stays bound relfrozenxid.  The scan works
	 * on its own copy of the leaf; a later VACUUM removes what stayed.  An
	 * aggressive VACUUM waits for a pinned leaf that stores anything older
	 * than its freeze limit, which it must freeze or remove.
	 */
	tree.vacuum_skip_pinned = true;
	if (aggressive)
		tree.vacuum_pinned_readable = pinned_version_readable;
	for (;;)
	{
		st.dead->num_items = 0;
		st.overflowed = false;
		st.live = st.removed = st.recently_dead = st.pruned_left = 0;
		st.skipped_rowids = 0;
		/* nothing a later transaction stores is older than the cutoffs */
		st.min_xid = oldest_xmin;
		st.min_multi = oldest_mxact;

		pgstat_progress_update_param(PROGRESS_VACUUM_PHASE,
									 PROGRESS_VACUUM_PHASE_SCAN_HEAP);
		/* a standby must not answer from versions about to go */
		if (TransactionIdIsNormal(oldest_xmin))
		{
			TransactionId horizon = oldest_xmin;

			TransactionIdRetreat(horizon);
			ft_log_removal_horizon(&tree, fractam_full_xid(horizon));
		}
		st.collecting = true;
		ft_vacuum(&tree, vacuum_version, skip, &st, &fres);
		st.collecting = false;
		compressed += fres.leaves_compressed;
		skipped = fres.leaves_skipped;
		skipped_rowids = st.skipped_rowids;
		passes++;
		total_removed += st.removed;

		if (st.dead->num_items > 0)
		{
			/* in row-id order already, unless leaves split under the pass */
			qsort(st.dead->items, st.dead->num_items, sizeof(ItemPointerData),
				  tid_cmp);
			pgstat_progress_update_param(PROGRESS_VACUUM_PHASE,
										 PROGRESS_VACUUM_PHASE_VACUUM_INDEX);
			for (i = 0; i < nindexes; i++)
			{
				IndexVacuumInfo ivinfo;

				fill_vacuum_info(&ivinfo, indrels[i], true, elevel,
								 st.live + st.recently_dead, bstrategy);
				istats[i] = index_bulk_delete(&ivinfo, istats[i], tid_removed,
											  st.dead);
			}

			/*
			 * Only now do the versions go: a crash before this point leaves
			 * them for the next VACUUM, which finds them again and cleans the
			 * indexes again.  (Removing them first would leave index entries
			 * pointing at nothing after such a crash, which the next VACUUM
			 * could not find, and an index-only scan of a pseudo-block marked
			 * all-visible would return them.)
			 */
			pgstat_progress_update_param(PROGRESS_VACUUM_PHASE,
										 PROGRESS_VACUUM_PHASE_VACUUM_HEAP);
			ft_vacuum(&tree, remove_collected, skip, &st, &fres);
			compressed += fres.leaves_compressed;
		}
		if (!st.overflowed)
			break;
	}

	/*
	 * The passes recorded the pages they freed at the free space map's
	 * bottom level (RecordFreeIndexPage); its searches start at the top, so
	 * make them findable, as an index VACUUM does.
	 */
	IndexFreeSpaceMapVacuum(rel);

	/* the indexes lost the removed versions' entries: mark what is settled */
	gaps = palloc(sizeof(FractamRowidGaps));
	gaps->n = 0;
	gaps->last = -1;
	all_visible = fractam_vm_vacuum(rel, gaps, oldest_xmin, st.skip_flags,
									bstrategy);
	/* and give back the row ids of pseudo-blocks that hold nothing now */
	rowids_given_back = fractam_rowids_give_back(rel, gaps);
	pfree(gaps);

	/*
	 * Live versions in the skipped ranges are estimated as heap estimates
	 * those of its skipped pages (from the density pg_class had), taking
	 * the skipped share of the row ids as the share of pages skipped.
	 */
	nblocks = RelationGetNumberOfBlocks(rel);
	live = st.live;
	if (skipped > 0)
	{
		double		used = (double) (fractam_rowid_end(rel) -
									 fractam_rowid_first(rel));
		BlockNumber unscanned;

		/* pg_class's pages, in the share of the row ids skipped */
		unscanned = (BlockNumber) ceil(nblocks *
									   Min(1.0, skipped_rowids / Max(used, 1.0)));
		live = vac_estimate_reltuples(rel, nblocks, nblocks - unscanned,
									  st.live);
		live = Max(live, st.live);
	}

	pgstat_progress_update_param(PROGRESS_VACUUM_PHASE,
								 PROGRESS_VACUUM_PHASE_INDEX_CLEANUP);
	for (i = 0; i < nindexes; i++)
	{
		IndexVacuumInfo ivinfo;

		fill_vacuum_info(&ivinfo, indrels[i], skipped > 0, elevel,
						 live + st.recently_dead, bstrategy);
		istats[i] = index_vacuum_cleanup(&ivinfo, istats[i]);
		if (istats[i])
		{
			if (!istats[i]->estimated_count)
				vac_update_relstats(indrels[i], istats[i]->num_pages,
									istats[i]->num_index_tuples, 0, false,
									InvalidTransactionId, InvalidMultiXactId,
									NULL, NULL, false);
			pfree(istats[i]);
		}
	}

	/*
	 * The last pass saw every version still stored (an overflowing pass is
	 * always followed by another; the dead versions left in leaves scans
	 * held were noted by its second pass) but those of all-frozen ranges:
	 * nothing older than its minima remains, and nothing a later transaction
	 * stores can be older than the cutoffs.  Unless it skipped a range whose
	 * versions are not all frozen: then relfrozenxid and relminmxid stay
	 * (invalid values leave them).
	 */
	if (st.skipped_unfrozen)
	{
		st.min_xid = InvalidTransactionId;
		st.min_multi = InvalidMultiXactId;
	}
	total_removed -= st.left_pinned;
	/* reltuples counts live versions only, as heap's (new_live_tuples) */
	vac_update_relstats(rel, nblocks, live,
						Min(all_visible, nblocks), nindexes > 0,
						st.min_xid, st.min_multi,
						&frozenxid_updated, &minmulti_updated, false);
	pgstat_report_vacuum(RelationGetRelid(rel), rel->rd_rel->relisshared,
						 (PgStat_Counter) live,
						 (PgStat_Counter) (st.recently_dead + st.pruned_left +
										   st.left_pinned));

	detail = psprintf(_("%u pages, %u pages freed by this VACUUM, %u leaves skipped (%s); %.0f row versions frozen; %llu row ids given back for reuse%s%s%s."),
					  fres.num_pages, fres.pages_deleted, skipped,
					  st.skip_flags == VISIBILITYMAP_ALL_VISIBLE ?
					  "all-visible" : "all-frozen",
					  st.frozen, (unsigned long long) rowids_given_back,
					  compressed > 0 ?
					  psprintf("; %u compressed leaves made", compressed) : "",
					  st.left_pinned > 0 ?
					  psprintf("; %.0f dead row versions left in leaves that scans held",
							   st.left_pinned) : "",
					  st.skipped_unfrozen ?
					  "; relfrozenxid not advanced (skipped versions not all frozen)" : "");
	if (log_auto &&
		TimestampDifferenceExceeds(starttime, GetCurrentTimestamp(),
								   params->log_min_duration))
	{
		WalUsage	walusage;

		memset(&walusage, 0, sizeof(walusage));
		WalUsageAccumDiff(&walusage, &pgWalUsage, &walusage_start);
		ereport(LOG,
				(errmsg("automatic %svacuum of table \"%s.%s.%s\": removed %.0f dead row versions in %d passes, %.0f live and %.0f recently dead remain",
						aggressive ? "aggressive " : "",
						get_database_name(MyDatabaseId),
						get_namespace_name(RelationGetNamespace(rel)),
						RelationGetRelationName(rel), total_removed, passes,
						live, st.recently_dead),
				 errdetail_internal("%s\nWAL usage: %lld records, %lld full page images, %llu bytes\nsystem usage: %s",
									detail,
									(long long) walusage.wal_records,
									(long long) walusage.wal_fpi,
									(unsigned long long) walusage.wal_bytes,
									pg_rusage_show(&ru0))));
	}
	else
		ereport(elevel,
				(errmsg("table \"%s\": removed %.0f dead row versions in %d passes, %.0f live and %.0f recently dead remain",
						RelationGetRelationName(rel), total_removed, passes,
						live, st.recently_dead),
				 errdetail_internal("%s", detail)));
	pfree(detail);
	if (BufferIsValid(st.vmbuf))
		ReleaseBuffer(st.vmbuf);

	vac_close_indexes(nindexes, indrels, NoLock);
	pfree(istats);
	pfree(st.dead);
	pgstat_progress_end_command();
}
