/*-------------------------------------------------------------------------
 *
 * ft_oscache.c
 *	  Is a leaf in memory, if not in shared buffers: the operating system's
 *	  page cache.
 *
 * Direct apply (ft_insert.c) puts an item straight into a leaf when that
 * costs no I/O.  By default that means "the leaf is in shared buffers".
 * fractam.page_cache_probe = on widens it: with shared_buffers a fraction
 * of memory, an index that fits in memory mostly lives in the kernel's
 * page cache, and a read from there is a copy, not an I/O.
 *
 * mincore() answers the question exactly, without starting any I/O (a
 * preadv2 with RWF_NOWAIT would: since Linux 5.9 a miss still starts
 * read-ahead).  Each backend maps the relation segments it probes (read
 * only, without touching the mapping; the descriptor is closed at once),
 * keyed by relation OID, relfilenode and segment, and unmaps them on a
 * relcache invalidation of the relation (REINDEX, TRUNCATE, DROP).  A stale
 * mapping can only give a wrong hint, never a wrong answer: nothing is read
 * through it.  Where mapping fails, the probe says "unknown" and direct
 * apply keeps its shared-buffers rule.
 *
 * The probe is off by default because, measured on iiBench with shared
 * buffers smaller than the indexes, the read is not free: it needs a
 * buffer, and in an insert load the buffer it evicts is usually a dirty
 * leaf that must be written first.  With memory to spare, applying to
 * leaves read from the page cache cost 10% more CPU per row than buffering
 * those inserts (2 clients); only one client with 50-row transactions
 * gained (5% CPU, 18% less WAL).  And the answer feeds on itself: with the
 * database about the size of memory, direct inserts read every leaf every
 * few seconds and so kept the leaves in the page cache, the probe kept
 * saying "in memory", and the inserts ran at a third of the rate the same
 * index reached buffering (bench/RESULTS.md, session 18).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/relpath.h"
#include "ft/ft_int.h"
#include "storage/fd.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/rel.h"

#define FT_OSCACHE_MAPS	8
#define FT_SEGMENT_BYTES	((Size) RELSEG_SIZE * BLCKSZ)

/*
 * The regime of one index, per backend: every FT_OSCACHE_SAMPLE-th leaf an
 * insert finds outside shared buffers is probed, and an exponential average
 * (weight FT_OSCACHE_WEIGHT) of the answers says whether the index is in
 * memory: then leaves outside shared buffers are applied to directly, like
 * cached ones, until the share falls below FT_OSCACHE_LEAVE.  The first
 * FT_OSCACHE_WARMUP of them are all probed (a plain average), so that the
 * regime is known before buffering starts: buffered messages keep their
 * key ranges buffered until they are flushed.  An index much larger than
 * memory has a small share and keeps buffering; the sampling costs it one
 * cheap system call per sixteen buffered inserts.
 */
#define FT_OSCACHE_SAMPLE	16
#define FT_OSCACHE_WARMUP	32
#define FT_OSCACHE_WEIGHT	(1.0f / 32)
#define FT_OSCACHE_ENTER	0.95f
#define FT_OSCACHE_LEAVE	0.85f

int			ft_page_cache_probe = FT_PAGE_CACHE_PROBE_OFF;

static const struct config_enum_entry page_cache_probe_options[] = {
	{"off", FT_PAGE_CACHE_PROBE_OFF, false},
	{"on", FT_PAGE_CACHE_PROBE_ON, false},
	{"assume", FT_PAGE_CACHE_PROBE_ASSUME, false},
	{NULL, 0, false}
};

typedef struct SegmentMap
{
	bool		used;
	Oid			relid;
	RelFileNode node;
	BlockNumber segno;
	char	   *base;			/* the mapping, or NULL: mapping failed */
	uint64		lastuse;
} SegmentMap;

static SegmentMap maps[FT_OSCACHE_MAPS];
static uint64 use_clock = 0;

static void
unmap_slot(SegmentMap *m)
{
	if (m->used && m->base != NULL)
		munmap(m->base, FT_SEGMENT_BYTES);
	m->used = false;
	m->base = NULL;
}

/* the slot mapping the segment that holds blkno (base NULL: unmappable) */
static SegmentMap *
segment_map(Relation rel, BlockNumber blkno)
{
	BlockNumber segno = blkno / ((BlockNumber) RELSEG_SIZE);
	SegmentMap *victim = NULL;
	char	   *path;
	int			fd;
	int			i;

	for (i = 0; i < FT_OSCACHE_MAPS; i++)
	{
		SegmentMap *m = &maps[i];

		if (m->used && m->relid == RelationGetRelid(rel) &&
			RelFileNodeEquals(m->node, rel->rd_node) && m->segno == segno)
		{
			m->lastuse = ++use_clock;
			return m;
		}
		if (victim == NULL || !m->used ||
			(victim->used && m->lastuse < victim->lastuse))
			victim = m;
	}

	unmap_slot(victim);
	path = relpathbackend(rel->rd_node, rel->rd_backend, MAIN_FORKNUM);
	if (segno > 0)
	{
		char	   *segpath = psprintf("%s.%u", path, segno);

		pfree(path);
		path = segpath;
	}
	victim->base = NULL;
	/* fd.c's open: on EMFILE it closes cached files and retries */
	fd = BasicOpenFile(path, O_RDONLY | PG_BINARY | O_CLOEXEC);
	pfree(path);
	if (fd >= 0)
	{
		void	   *p = mmap(NULL, FT_SEGMENT_BYTES, PROT_READ, MAP_SHARED, fd, 0);

		if (p != MAP_FAILED)
			victim->base = p;
		close(fd);
	}
	victim->used = true;		/* a failure is remembered too */
	victim->relid = RelationGetRelid(rel);
	victim->node = rel->rd_node;
	victim->segno = segno;
	victim->lastuse = ++use_clock;
	return victim;
}

typedef enum FtOsCacheAnswer
{
	FT_OSCACHE_NO,
	FT_OSCACHE_YES,
	FT_OSCACHE_UNKNOWN
} FtOsCacheAnswer;

/*
 * Is block blkno of rel's main fork in the page cache?  Returns
 * FT_OSCACHE_UNKNOWN where the kernel cannot tell.  The OS pages holding
 * the block are asked for; an OS page larger than a block (64 kB on some
 * arm64 and ppc64 kernels) holds it whole.
 */
static FtOsCacheAnswer
block_in_os_cache(Relation rel, BlockNumber blkno)
{
	static long pagesize = 0;
	SegmentMap *m = segment_map(rel, blkno);
	unsigned char vec[BLCKSZ / 1024 + 1];	/* one byte per OS page */
	uintptr_t	start;
	uintptr_t	end;
	int			npages;
	int			i;

	if (pagesize == 0)
		pagesize = sysconf(_SC_PAGESIZE);
	if (m->base == NULL || pagesize <= 0 || (pagesize & (pagesize - 1)) != 0)
		return FT_OSCACHE_UNKNOWN;
	start = (uintptr_t) (m->base +
						 (Size) (blkno % ((BlockNumber) RELSEG_SIZE)) * BLCKSZ);
	end = start + BLCKSZ;
	start &= ~((uintptr_t) pagesize - 1);
	npages = (end - start + pagesize - 1) / pagesize;
	if (npages > (int) sizeof(vec))
		return FT_OSCACHE_UNKNOWN;
	if (mincore((void *) start, end - start, vec) != 0)
		return FT_OSCACHE_UNKNOWN;
	for (i = 0; i < npages; i++)
		if ((vec[i] & 1) == 0)
			return FT_OSCACHE_NO;
	return FT_OSCACHE_YES;
}

/*
 * Does applying an item to leaf blkno, which is not in shared buffers, cost
 * no I/O?  (See FT_OSCACHE_SAMPLE.)
 */
bool
ft_leaf_in_memory(FtTree *tree, BlockNumber blkno)
{
	FtRootCache *rc = tree->rootcache;
	FtOsCacheAnswer a;

	if (ft_page_cache_probe == FT_PAGE_CACHE_PROBE_ASSUME)
		return true;
	if (rc == NULL || ft_page_cache_probe == FT_PAGE_CACHE_PROBE_OFF)
		return false;
	/* the first FT_OSCACHE_WARMUP leaves are all probed */
	if (++rc->oscache_tick % FT_OSCACHE_SAMPLE != 0 &&
		rc->oscache_samples >= FT_OSCACHE_WARMUP)
		return rc->oscache_mode;
	/* an unknown answer counts as "not in memory" */
	a = block_in_os_cache(tree->rel, blkno);
	rc->oscache_samples++;
	rc->oscache_rate += Max(FT_OSCACHE_WEIGHT, 1.0f / rc->oscache_samples) *
		((a == FT_OSCACHE_YES ? 1.0f : 0.0f) - rc->oscache_rate);
	if (rc->oscache_mode ? rc->oscache_rate < FT_OSCACHE_LEAVE :
		rc->oscache_rate >= FT_OSCACHE_ENTER)
		rc->oscache_mode = !rc->oscache_mode;
	return a == FT_OSCACHE_YES;
}

/* Is the index in memory (leaves outside shared buffers are cheap)? */
bool
ft_index_in_memory(FtTree *tree)
{
	if (ft_page_cache_probe == FT_PAGE_CACHE_PROBE_ASSUME)
		return true;
	return tree->rootcache != NULL &&
		ft_page_cache_probe == FT_PAGE_CACHE_PROBE_ON &&
		tree->rootcache->oscache_mode;
}

/* Unmap this backend's segments of a relation (relcache invalidation) */
void
ft_oscache_invalidate(Oid relid)
{
	int			i;

	for (i = 0; i < FT_OSCACHE_MAPS; i++)
		if (maps[i].used && (maps[i].relid == relid || relid == InvalidOid))
			unmap_slot(&maps[i]);
}

/* A mapping must not outlive the relation file (REINDEX, TRUNCATE, DROP) */
static void
oscache_relcache_callback(Datum arg, Oid relid)
{
	ft_oscache_invalidate(relid);
}

void
ft_oscache_init(void)
{
	DefineCustomEnumVariable("fractam.page_cache_probe",
							 "Treat leaves in the kernel's page cache as cached.",
							 "on: when most leaves outside shared buffers are in the page "
							 "cache (sampled with mincore()), apply inserts to them "
							 "directly and flush buffered messages on the way; off (the "
							 "default): only leaves in shared buffers count; assume: every "
							 "index is in memory (for testing).",
							 &ft_page_cache_probe, FT_PAGE_CACHE_PROBE_OFF,
							 page_cache_probe_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	CacheRegisterRelcacheCallback(oscache_relcache_callback, (Datum) 0);
}
