/*-------------------------------------------------------------------------
 *
 * ft_routecache.c
 *	  Backend-local copies of routing pages (level >= 3).
 *
 * Every descent passes the root and the routing levels, a handful of pages
 * per index that every backend reads on every insert and lookup.  Reading
 * them through the buffer manager costs a mapping lookup, a pin and a
 * content lock each time; this cache keeps private copies instead.
 *
 * A stale copy is harmless, by the same argument that makes Lehman-Yao
 * descents correct with stale downlinks: the pages copies point to (level
 * >= 2) only split to the right, so the node a copy routes to still starts
 * at or below the search key; at worst the descent has to move right at
 * the next level, and the copy that routed it there is dropped, so the
 * next descent reads the current page.  VACUUM deletes a level-2 node that
 * nothing is left under (ft_vacuum.c); a descent that reaches it moves
 * right to the node that took over its range, as from any deleted page.
 * But once the page is recycled, a copy pointing to it would send a
 * descent to an unrelated page: so each deletion of a level-2 node (and
 * its redo on a standby) advances a shared "routing epoch", and a backend
 * that finds the epoch moved drops all its copies before it uses one.  The
 * page cannot be recycled before then: a descent that looked at a copy
 * before the epoch moved runs under a snapshot older than the deletion.
 *
 * Copies are keyed by (index OID, block) and also remember the relfilenode
 * they were read from; the index AM drops an index's copies on every
 * relcache invalidation of it (REINDEX, TRUNCATE, DROP all send one), so a
 * copy never outlives the relation file it came from.  The total size is
 * bounded by fractam.routing_cache_pages, with clock replacement.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "ft/ft_int.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/rel.h"

int			ft_routing_cache_pages = 256;

typedef struct RouteCacheKey
{
	Oid			relid;
	BlockNumber blkno;
} RouteCacheKey;

typedef struct RouteCacheEntry
{
	RouteCacheKey key;
	int			slot;
} RouteCacheEntry;

typedef struct RouteCacheSlot
{
	bool		inuse;
	bool		referenced;		/* clock bit */
	RouteCacheKey key;
	RelFileNode node;
	char	   *page;
} RouteCacheSlot;

static MemoryContext cache_cxt = NULL;
static HTAB *cache_hash = NULL;
static RouteCacheSlot *slots = NULL;
static int	nslots = 0;			/* capacity the cache was built with */
static int	clock_hand = 0;
static List *cached_relids = NIL;	/* indexes with copies, for invalidation */
static FtRouteCacheStats counters;

/* the shared routing epoch, and the one this backend's copies are from */
typedef struct RoutingEpoch
{
	pg_atomic_uint64 epoch;
} RoutingEpoch;

static RoutingEpoch *routing_epoch = NULL;
static uint64 copies_epoch = 0;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void
reset_cache(void)
{
	if (cache_cxt)
		MemoryContextDelete(cache_cxt);
	cache_cxt = NULL;
	cache_hash = NULL;
	slots = NULL;
	nslots = 0;
	clock_hand = 0;
	cached_relids = NIL;
}

/* (Re)build the cache when it is first used or its size setting changed */
static bool
ensure_cache(void)
{
	HASHCTL		ctl;

	if (nslots == ft_routing_cache_pages && cache_hash != NULL)
		return true;
	reset_cache();
	if (ft_routing_cache_pages <= 0)
		return false;

	cache_cxt = AllocSetContextCreate(TopMemoryContext, "fractam routing cache",
									  ALLOCSET_DEFAULT_SIZES);
	ctl.keysize = sizeof(RouteCacheKey);
	ctl.entrysize = sizeof(RouteCacheEntry);
	ctl.hcxt = cache_cxt;
	cache_hash = hash_create("fractam routing cache", ft_routing_cache_pages,
							 &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	slots = MemoryContextAllocZero(cache_cxt,
								   sizeof(RouteCacheSlot) * ft_routing_cache_pages);
	nslots = ft_routing_cache_pages;
	/* an empty cache holds no copy from before any deletion */
	if (routing_epoch != NULL)
		copies_epoch = pg_atomic_read_u64(&routing_epoch->epoch);
	return true;
}

static void
drop_slot(RouteCacheSlot *s)
{
	bool		found;

	Assert(s->inuse);
	hash_search(cache_hash, &s->key, HASH_REMOVE, &found);
	Assert(found);
	s->inuse = false;
}

/*
 * The cached copy of blkno at the given level, or NULL.
 */
Page
ft_routecache_lookup(FtTree *tree, BlockNumber blkno, uint32 level)
{
	RouteCacheKey key;
	RouteCacheEntry *e;
	RouteCacheSlot *s;

	if (nslots != ft_routing_cache_pages || cache_hash == NULL)
		return NULL;
	if (routing_epoch != NULL &&
		pg_atomic_read_u64(&routing_epoch->epoch) != copies_epoch)
	{
		/* a level-2 node was deleted somewhere: no copy may point to it */
		copies_epoch = pg_atomic_read_u64(&routing_epoch->epoch);
		ft_routecache_invalidate(InvalidOid);
		return NULL;
	}
	key.relid = RelationGetRelid(tree->rel);
	key.blkno = blkno;
	e = hash_search(cache_hash, &key, HASH_FIND, NULL);
	if (e == NULL)
		return NULL;
	s = &slots[e->slot];
	if (!RelFileNodeEquals(s->node, tree->rel->rd_node) ||
		FtPageGetOpaque((Page) s->page)->ft_level != level)
	{
		drop_slot(s);
		return NULL;
	}
	s->referenced = true;
	counters.hits++;
	return (Page) s->page;
}

/*
 * Remember a copy of a routing page that the caller holds locked.
 */
void
ft_routecache_store(FtTree *tree, BlockNumber blkno, Page page)
{
	RouteCacheKey key;
	RouteCacheEntry *e;
	RouteCacheSlot *s;
	bool		found;
	Oid			relid = RelationGetRelid(tree->rel);

	Assert(FtPageIsRouting(FtPageGetOpaque(page)));
	if (!ensure_cache())
		return;

	key.relid = relid;
	key.blkno = blkno;
	e = hash_search(cache_hash, &key, HASH_FIND, NULL);
	if (e != NULL)
		s = &slots[e->slot];
	else
	{
		/* clock sweep for a free or unreferenced slot */
		for (;;)
		{
			s = &slots[clock_hand];
			clock_hand = (clock_hand + 1) % nslots;
			if (!s->inuse)
				break;
			if (!s->referenced)
			{
				drop_slot(s);
				break;
			}
			s->referenced = false;
		}
		if (s->page == NULL)
			s->page = MemoryContextAlloc(cache_cxt, BLCKSZ);
		e = hash_search(cache_hash, &key, HASH_ENTER, &found);
		Assert(!found);
		e->slot = s - slots;
		s->key = key;
		s->inuse = true;
		if (!list_member_oid(cached_relids, relid))
		{
			MemoryContext old = MemoryContextSwitchTo(cache_cxt);

			cached_relids = lappend_oid(cached_relids, relid);
			MemoryContextSwitchTo(old);
		}
	}
	s->node = tree->rel->rd_node;
	s->referenced = true;
	ft_copy_page(s->page, page);
	counters.stores++;
}

/*
 * Drop the copy of one page, found to be stale.
 */
void
ft_routecache_forget(FtTree *tree, BlockNumber blkno)
{
	RouteCacheKey key;
	RouteCacheEntry *e;

	if (cache_hash == NULL)
		return;
	key.relid = RelationGetRelid(tree->rel);
	key.blkno = blkno;
	e = hash_search(cache_hash, &key, HASH_FIND, NULL);
	if (e != NULL)
	{
		drop_slot(&slots[e->slot]);
		counters.stale++;
	}
}

/*
 * Drop every copy of an index (InvalidOid: of all indexes).  Called from
 * relcache invalidation, so it must not fail or do catalog access.
 */
void
ft_routecache_invalidate(Oid relid)
{
	int			i;

	if (cache_hash == NULL)
		return;
	if (!OidIsValid(relid))
	{
		for (i = 0; i < nslots; i++)
			if (slots[i].inuse)
				drop_slot(&slots[i]);
		list_free(cached_relids);
		cached_relids = NIL;
		return;
	}
	if (!list_member_oid(cached_relids, relid))
		return;
	for (i = 0; i < nslots; i++)
		if (slots[i].inuse && slots[i].key.relid == relid)
			drop_slot(&slots[i]);
	cached_relids = list_delete_oid(cached_relids, relid);
}

/* This backend's counters, and the number of pages cached now */
void
ft_routecache_stats(FtRouteCacheStats *stats)
{
	*stats = counters;
	stats->cached_pages = cache_hash ? hash_get_num_entries(cache_hash) : 0;
}

/*
 * Cached routing pages of an index must not outlive its relation file:
 * REINDEX, TRUNCATE and DROP all invalidate the index's relcache entry.
 */
static void
routecache_relcache_callback(Datum arg, Oid relid)
{
	ft_routecache_invalidate(relid);
}

/*
 * A level-2 node was deleted (or its deletion replayed): every backend drops
 * its copies before it uses one again.  Call while the deleted page is
 * still locked.
 */
void
ft_routecache_advance_epoch(void)
{
	Assert(routing_epoch != NULL);
	pg_atomic_fetch_add_u64(&routing_epoch->epoch, 1);
}

/* Whether level-2 nodes may be deleted: the epoch lives in shared memory */
bool
ft_routecache_epoch_ready(void)
{
	return routing_epoch != NULL;
}

static void
routing_epoch_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(RoutingEpoch)));
}

static void
routing_epoch_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	routing_epoch = ShmemInitStruct("fractam routing epoch",
									sizeof(RoutingEpoch), &found);
	if (!found)
		pg_atomic_init_u64(&routing_epoch->epoch, 0);
	LWLockRelease(AddinShmemInitLock);
}

void
ft_routecache_init(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = routing_epoch_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = routing_epoch_shmem_startup;

	DefineCustomIntVariable("fractam.routing_cache_pages",
							"Routing pages each backend keeps private copies of.",
							"Saves descents the shared-buffer lookups of the levels "
							"above the buffer nodes; 0 disables the cache.",
							&ft_routing_cache_pages, 256, 0, 65536,
							PGC_USERSET, GUC_UNIT_BLOCKS, NULL, NULL, NULL);
	CacheRegisterRelcacheCallback(routecache_relcache_callback, (Datum) 0);
}
