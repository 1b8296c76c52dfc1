/*-------------------------------------------------------------------------
 *
 * table_rowid_reuse.c
 *	  Row ids of pseudo-blocks VACUUM emptied, given back for reuse.
 *
 * Every row version takes a new row id, so a table with steady churn (a
 * queue, a table updated over and over) would run through its row ids, and
 * its TID blocks would run ahead of its rows.  VACUUM therefore gives back
 * the pseudo-blocks (FRACTAM_ROWS_PER_BLOCK row ids) that hold nothing any
 * more: no version and no dead set, so no index entry points into them
 * either (a version's entries go before the version, and a dead set stays
 * until they are gone).  The ranges given back live in the tree's metapage
 * (ft_meta_give_back_seq, WAL-logged with it), and fractam_next_rowid
 * hands them out before it advances the counter.
 *
 * The hazard is a backend's unused range: a backend takes the rest of a
 * pseudo-block at a time (or a few whole pseudo-blocks more, when it uses
 * its ranges up quickly) and keeps it between transactions, so a
 * pseudo-block may hold nothing (its versions not written yet, or written
 * by a transaction that aborted and removed by VACUUM) while a backend is
 * still going to write into it.  Giving it back then would hand the same
 * row ids out twice.  So every backend publishes the pseudo-blocks it
 * holds of each table in shared memory ("holdings", a range of them per
 * table, a few tables per backend), and it does so while the metapage is
 * still locked by the take (FtSeqPolicy.granted).  VACUUM gives back a
 * pseudo-block B only if
 *
 *	 1. B was wholly below the counter and not among the ranges given back
 *		when VACUUM read the metapage (ft_meta_read_seq_state): then every
 *		backend that ever held B took it before that read, so published it
 *		before, and nobody can take B afterwards (only VACUUM gives ranges
 *		back, and VACUUMs of one table do not overlap);
 *	 2. no backend holds B after that read: a backend lets go of B only once
 *		it has stored every version it numbered there (it moves on to
 *		another range only when B's is used up, and COPY stores a batch's
 *		versions range by range), or when it forgets B altogether (its
 *		cache of the table is reset or dropped, or evicted from its
 *		holdings: between statements, never with versions in flight);
 *	 3. the tree holds no item in B, looked for after step 2 (so anything
 *		the last holder wrote is seen; the holdings' lock orders it).
 *
 * A range given back is reused only once every snapshot taken before it
 * was given back has gone (its tag is the next transaction id then, which
 * GlobalVisCheckRemovableFullXid finds removable once no snapshot's xmin
 * is at or before it), as nbtree recycles a deleted page: a scan of such
 * a snapshot may still hold a TID it read before VACUUM removed the index
 * entry, and must not find another row there.  (An MVCC snapshot would
 * not see a version written into a reused row id anyway, as with heap's
 * reused line pointers; the wait covers the other snapshots too.)
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "am/table/fractam_table.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

/*
 * Pseudo-blocks a backend holds at most, one per table
 * (fractam.rowid_holdings_per_backend): a backend writing to more tables in
 * turn gives up the rest of the least recently taken range.
 */
int			fractam_rowid_holdings = 64;

typedef struct RowidHolding
{
	RelFileNode node;
	BlockNumber blk;			/* InvalidBlockNumber: slot free */
	BlockNumber nblks;			/* the range's pseudo-blocks from blk */
} RowidHolding;

typedef struct RowidHoldings
{
	int			nslots;
	RowidHolding slot[FLEXIBLE_ARRAY_MEMBER];
} RowidHoldings;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static RowidHoldings *holdings = NULL;
static LWLock *holdings_lock = NULL;

/*
 * This backend's slots: the cache holding each (NULL: free) and when it
 * took its range (a count of takes), for evicting the least recent.
 */
typedef struct MyHolding
{
	FractamTableCache *cache;
	uint64		taken;
} MyHolding;

static MyHolding *my_holdings = NULL;
static uint64 my_takes = 0;

static Size
holdings_size(void)
{
	return add_size(offsetof(RowidHoldings, slot),
					mul_size(mul_size(MaxBackends, fractam_rowid_holdings),
							 sizeof(RowidHolding)));
}

static void
holdings_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(holdings_size()));
	RequestNamedLWLockTranche("fractam_rowids", 1);
}

static void
holdings_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	holdings = ShmemInitStruct("fractam row id holdings", holdings_size(),
							   &found);
	if (!found)
	{
		holdings->nslots = MaxBackends * fractam_rowid_holdings;
		for (int i = 0; i < holdings->nslots; i++)
			holdings->slot[i].blk = InvalidBlockNumber;
	}
	LWLockRelease(AddinShmemInitLock);
	holdings_lock = &(GetNamedLWLockTranche("fractam_rowids"))->lock;
}

/* At library load: ask for the holdings' shared memory */
void
fractam_rowid_reuse_init(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = holdings_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = holdings_shmem_startup;
}

/* This backend's slot i */
static RowidHolding *
my_slot(int i)
{
	Assert(i >= 0 && i < fractam_rowid_holdings);
	return &holdings->slot[(MyBackendId - 1) * fractam_rowid_holdings + i];
}

/* At backend exit: the backend holds nothing any more */
static void
release_all(int code, Datum arg)
{
	LWLockAcquire(holdings_lock, LW_EXCLUSIVE);
	for (int i = 0; i < fractam_rowid_holdings; i++)
		my_slot(i)->blk = InvalidBlockNumber;
	LWLockRelease(holdings_lock);
}

/*
 * May this backend take row ids?  Called before a take: a failure after
 * it would lose the range taken.
 */
void
fractam_rowids_check_ready(void)
{
	if (my_holdings != NULL)
		return;
	if (holdings == NULL || MyBackendId == InvalidBackendId ||
		MyBackendId > MaxBackends)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("fractam tables can only be written with fractam in shared_preload_libraries")));
	my_holdings = MemoryContextAllocZero(TopMemoryContext,
										 fractam_rowid_holdings * sizeof(MyHolding));
	on_shmem_exit(release_all, (Datum) 0);
}

/* Should slot a be given up before slot b?  Used-up ranges first, then LRU */
static bool
evict_before(const MyHolding *a, const MyHolding *b)
{
	bool		a_used = a->cache->next_rowid >= a->cache->end_rowid;
	bool		b_used = b->cache->next_rowid >= b->cache->end_rowid;

	if (a_used != b_used)
		return a_used;
	return a->taken < b->taken;
}

/*
 * This backend now holds pseudo-blocks blk .. blk + nblks - 1 of the
 * cache's table (called
 * while the take still locks the metapage, after
 * fractam_rowids_check_ready).  A backend that holds pseudo-blocks of
 * fractam.rowid_holdings_per_backend other tables gives up one of them
 * (one whose range is used up if there is one, else the one taken least
 * recently), losing the rest of its range: it takes a new one when it
 * writes there again.  The versions it numbered there are stored: a
 * backend stores what it numbers before it takes row ids of another table
 * (see the file header, step 2).
 */
void
fractam_rowids_hold(FractamTableCache *cache, BlockNumber blk,
					BlockNumber nblks)
{
	int			i = cache->holding;

	Assert(my_holdings != NULL);
	if (i < 0)
	{
		int			victim = -1;

		for (i = 0; i < fractam_rowid_holdings; i++)
		{
			if (my_holdings[i].cache == NULL)
				break;
			if (victim < 0 || evict_before(&my_holdings[i], &my_holdings[victim]))
				victim = i;
		}
		if (i == fractam_rowid_holdings)
		{
			FractamTableCache *c = my_holdings[victim].cache;

			i = victim;
			c->next_rowid = c->end_rowid;
			c->holding = -1;
		}
		my_holdings[i].cache = cache;
		cache->holding = i;
	}
	my_holdings[i].taken = ++my_takes;
	LWLockAcquire(holdings_lock, LW_EXCLUSIVE);
	my_slot(i)->node = cache->node;
	my_slot(i)->blk = blk;
	my_slot(i)->nblks = nblks;
	LWLockRelease(holdings_lock);
}

/* The cache's table forgets its range: this backend holds nothing there */
void
fractam_rowids_release(FractamTableCache *cache)
{
	int			i = cache->holding;

	if (i < 0)
		return;
	Assert(my_holdings != NULL && my_holdings[i].cache == cache);
	LWLockAcquire(holdings_lock, LW_EXCLUSIVE);
	my_slot(i)->blk = InvalidBlockNumber;
	LWLockRelease(holdings_lock);
	my_holdings[i].cache = NULL;
	cache->holding = -1;
	cache->next_rowid = cache->end_rowid;
}

/* Ranges of pseudo-blocks [lo, hi), for sorting */
typedef struct BlockRange
{
	BlockNumber lo;
	BlockNumber hi;
} BlockRange;

/*
 * The ranges of pseudo-blocks of the relation file that backends hold,
 * into held (room for every slot)
 */
static int
held_blocks(RelFileNode node, BlockRange *held)
{
	int			n = 0;

	LWLockAcquire(holdings_lock, LW_SHARED);
	for (int i = 0; i < holdings->nslots; i++)
		if (holdings->slot[i].blk != InvalidBlockNumber &&
			RelFileNodeEquals(holdings->slot[i].node, node))
		{
			held[n].lo = holdings->slot[i].blk;
			held[n].hi = holdings->slot[i].blk + holdings->slot[i].nblks;
			n++;
		}
	LWLockRelease(holdings_lock);
	return n;
}

/*
 * A range given back with this tag may be handed out again: no snapshot
 * taken before it was given back remains (FtSeqPolicy.reusable).
 */
bool
fractam_rowids_reusable(Relation rel, uint64 tag)
{
	return GlobalVisCheckRemovableFullXid(rel, FullTransactionIdFromU64(tag));
}

/* ---- VACUUM ---- */

/*
 * Add the empty pseudo-blocks [lo, hi) (hi InvalidBlockNumber: up to the
 * counter), found in ascending order.  Beyond FRACTAM_MAX_ROWID_GAPS runs
 * the smallest are dropped (the metapage keeps only the largest ranges
 * anyway).
 */
void
fractam_rowid_gaps_add(FractamRowidGaps *gaps, BlockNumber lo, BlockNumber hi)
{
	int			smallest = 0;

	if (gaps == NULL || lo >= hi)
		return;
	if (gaps->last >= 0 && gaps->range[gaps->last].hi == lo)
	{
		gaps->range[gaps->last].hi = hi;
		return;
	}
	if (gaps->n < FRACTAM_MAX_ROWID_GAPS)
		gaps->last = gaps->n++;
	else
	{
		for (int i = 1; i < gaps->n; i++)
			if (gaps->range[i].hi - gaps->range[i].lo <
				gaps->range[smallest].hi - gaps->range[smallest].lo)
				smallest = i;
		if (gaps->range[smallest].hi - gaps->range[smallest].lo >= hi - lo)
		{
			gaps->last = -1;
			return;
		}
		gaps->last = smallest;
	}
	gaps->range[gaps->last].lo = lo;
	gaps->range[gaps->last].hi = hi;
}

static int
block_range_cmp(const void *a, const void *b)
{
	const BlockRange *x = (const BlockRange *) a;
	const BlockRange *y = (const BlockRange *) b;

	return (x->lo > y->lo) - (x->lo < y->lo);
}

/*
 * Append the pseudo-blocks of [lo, hi) that hold no item of the tree
 * (looked for now) to out as row-id ranges.
 */
static void
append_empty(FtTree *tree, BlockNumber lo, BlockNumber hi, uint64 tag,
			 FtSeqExtent *out, int *nout, int maxout)
{
	FtScan		scan = ft_scan_begin(tree);

	ft_scan_set_keep_pins(scan, false);
	while (lo < hi && *nout < maxout)
	{
		char		key[FRACTAM_ROWID_SIZE];
		const char *item;
		Size		len;
		BlockNumber stop = hi;

		fractam_rowid_key((FtRowId) lo * FRACTAM_ROWS_PER_BLOCK, key);
		ft_scan_seek(scan, key, sizeof(key), true);
		if (ft_scan_next(scan, &item, &len))
		{
			FtRowId		rowid = fractam_item_rowid(item);

			if (rowid < (FtRowId) hi * FRACTAM_ROWS_PER_BLOCK)
				stop = (BlockNumber) (rowid / FRACTAM_ROWS_PER_BLOCK);
		}
		if (stop > lo)
		{
			out[*nout].first = (uint64) lo * FRACTAM_ROWS_PER_BLOCK;
			out[*nout].end = (uint64) stop * FRACTAM_ROWS_PER_BLOCK;
			out[*nout].tag = tag;
			(*nout)++;
		}
		lo = stop + 1;
		CHECK_FOR_INTERRUPTS();
	}
	ft_scan_end(scan);
}

/*
 * After VACUUM removed what it could: give back the pseudo-blocks of gaps
 * (the runs its last pass found no item in) that the steps of the file
 * header allow.  Returns the number of row ids given back.
 */
uint64
fractam_rowids_give_back(Relation rel, FractamRowidGaps *gaps)
{
	FtTree		tree;
	FtSeqState	state;
	BlockNumber first_blk;
	BlockNumber end_blk;
	BlockRange *excluded;
	int			nexcluded = 0;
	FtSeqExtent *out;
	int			nout = 0;
	int			maxout;
	uint64		tag;
	uint64		given = 0;

	if (gaps->n == 0)
		return 0;
	fractam_table_tree(rel, &tree);
	/* step 1 */
	ft_meta_read_seq_state(&tree, &state);
	first_blk = (BlockNumber) ((state.seq_first + FRACTAM_ROWS_PER_BLOCK - 1) /
							   FRACTAM_ROWS_PER_BLOCK);
	end_blk = (BlockNumber) (state.seq / FRACTAM_ROWS_PER_BLOCK);
	/* the blocks held (step 2), and those (partly) given back already */
	excluded = palloc((holdings->nslots + state.nfree) * sizeof(BlockRange));
	nexcluded = held_blocks(rel->rd_node, excluded);
	/* reusable once every snapshot that may predate this has gone */
	tag = U64FromFullTransactionId(ReadNextFullTransactionId());

	for (uint32 i = 0; i < state.nfree; i++)
	{
		excluded[nexcluded].lo = (BlockNumber) (state.given_back[i].first /
												FRACTAM_ROWS_PER_BLOCK);
		excluded[nexcluded].hi = (BlockNumber) ((state.given_back[i].end +
												 FRACTAM_ROWS_PER_BLOCK - 1) /
												FRACTAM_ROWS_PER_BLOCK);
		nexcluded++;
	}
	qsort(excluded, nexcluded, sizeof(BlockRange), block_range_cmp);

	maxout = FRACTAM_MAX_ROWID_GAPS * 2;
	out = palloc(maxout * sizeof(FtSeqExtent));
	for (int g = 0; g < gaps->n && nout < maxout; g++)
	{
		BlockNumber lo = Max(gaps->range[g].lo, first_blk);
		BlockNumber hi = Min(gaps->range[g].hi, end_blk);

		/* the parts of [lo, hi) between excluded ranges; step 3 for each */
		for (int e = 0; e < nexcluded && lo < hi; e++)
		{
			if (excluded[e].hi <= lo)
				continue;
			if (excluded[e].lo >= hi)
				break;
			if (excluded[e].lo > lo)
				append_empty(&tree, lo, excluded[e].lo, tag, out, &nout,
							 maxout);
			lo = Max(lo, excluded[e].hi);
		}
		if (lo < hi)
			append_empty(&tree, lo, hi, tag, out, &nout, maxout);
	}
	if (nout > 0)
		ft_meta_give_back_seq(&tree, out, nout);
	for (int i = 0; i < nout; i++)
		given += out[i].end - out[i].first;
	pfree(out);
	pfree(excluded);
	return given;
}

/*
 * Row ids handed out and not given back for reuse, from one look at the
 * metapage (fractam_table_stats)
 */
uint64
fractam_rowids_in_use(Relation rel)
{
	FtTree		tree;
	FtSeqState	state;
	uint64		n;

	fractam_table_tree(rel, &tree);
	ft_meta_read_seq_state(&tree, &state);
	n = state.seq;
	for (uint32 i = 0; i < state.nfree; i++)
		n -= state.given_back[i].end - state.given_back[i].first;
	return n;
}

/*
 * fractam_verify, with the table's writers locked out: no item of the table
 * lies in a range given back, and every range is below the counter.  Items
 * come in row id order; *next is the first range not yet passed (start at
 * 0).
 */
void
fractam_rowids_verify_item(Relation rel, const FtSeqState *state,
						   FtRowId rowid, uint32 *next)
{
	while (*next < state->nfree && state->given_back[*next].end <= rowid)
		(*next)++;
	if (*next < state->nfree && state->given_back[*next].first <= rowid)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("table \"%s\" holds row version (%u,%u) whose row id VACUUM gave back for reuse",
						RelationGetRelationName(rel),
						(BlockNumber) (rowid / FRACTAM_ROWS_PER_BLOCK),
						(unsigned) (rowid % FRACTAM_ROWS_PER_BLOCK + 1))));
}

/* fractam_verify: the ranges given back are sorted, disjoint, handed out */
void
fractam_rowids_verify_state(Relation rel, const FtSeqState *state)
{
	for (uint32 i = 0; i < state->nfree; i++)
	{
		const FtSeqExtent *e = &state->given_back[i];

		if (e->first >= e->end || e->end > state->seq ||
			(i > 0 && state->given_back[i - 1].end > e->first))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("table \"%s\" has a bad range of row ids given back for reuse: [%llu, %llu) with the counter at %llu",
							RelationGetRelationName(rel),
							(unsigned long long) e->first,
							(unsigned long long) e->end,
							(unsigned long long) state->seq)));
	}
}
