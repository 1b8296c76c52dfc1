/*-------------------------------------------------------------------------
 *
 * ft_oscache.c
 *	  Is a leaf in memory, if not in shared buffers: the operating system's
 *	  page cache.
 *
 * Direct apply (ft_insert.c) puts an item straight into a leaf when that
 * costs no I/O.  "In shared buffers" is too narrow a test for that: with
 * shared_buffers a fraction of memory, as usual, an index that fits in
 * memory mostly lives in the kernel's page cache, and a read from there is
 * a copy, not an I/O.  Buffering such inserts only adds moves, flushes and
 * their WAL to a load that a B-tree serves from memory.
 *
 * preadv2(RWF_NOWAIT) answers the question exactly and cheaply: it reads
 * the block if the page cache has it and fails with EAGAIN instead of
 * starting I/O otherwise.  Each backend keeps a few descriptors of the
 * relation segments it probed (accounted with AcquireExternalFD), keyed by
 * relation OID and relfilenode, and drops them on a relcache invalidation of
 * the relation (REINDEX, TRUNCATE, DROP).  A stale descriptor can only give
 * a wrong hint, never a wrong answer: the probe's data is never used.
 * Where RWF_NOWAIT is unavailable the probe says "unknown" and direct apply
 * keeps its shared-buffers rule.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/relpath.h"
#include "ft/ft_int.h"
#include "storage/fd.h"
#include "utils/rel.h"

#define FT_OSCACHE_FDS	8

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

int			ft_page_cache_probe = FT_PAGE_CACHE_PROBE_ON;

typedef struct OsCacheFd
{
	Oid			relid;
	RelFileNode node;
	BlockNumber segno;
	int			fd;				/* -1: slot free */
	uint64		lastuse;
} OsCacheFd;

static OsCacheFd fds[FT_OSCACHE_FDS];
static bool fds_init = false;
static uint64 use_clock = 0;

static void
close_slot(OsCacheFd *s)
{
	if (s->fd >= 0)
	{
		close(s->fd);
		ReleaseExternalFD();
	}
	s->fd = -1;
}

/* a descriptor of the segment holding blkno, or -1 */
static int
segment_fd(Relation rel, BlockNumber blkno)
{
	BlockNumber segno = blkno / ((BlockNumber) RELSEG_SIZE);
	OsCacheFd  *victim = NULL;
	char	   *path;
	int			i;

	if (!fds_init)
	{
		for (i = 0; i < FT_OSCACHE_FDS; i++)
			fds[i].fd = -1;
		fds_init = true;
	}
	for (i = 0; i < FT_OSCACHE_FDS; i++)
	{
		OsCacheFd  *s = &fds[i];

		if (s->fd >= 0 && s->relid == RelationGetRelid(rel) &&
			RelFileNodeEquals(s->node, rel->rd_node) && s->segno == segno)
		{
			s->lastuse = ++use_clock;
			return s->fd;
		}
		if (victim == NULL || s->fd < 0 ||
			(victim->fd >= 0 && s->lastuse < victim->lastuse))
			victim = s;
	}

	close_slot(victim);
	if (!AcquireExternalFD())
		return -1;
	path = relpathbackend(rel->rd_node, rel->rd_backend, MAIN_FORKNUM);
	if (segno > 0)
	{
		char	   *segpath = psprintf("%s.%u", path, segno);

		pfree(path);
		path = segpath;
	}
	victim->fd = open(path, O_RDONLY | PG_BINARY, 0);
	pfree(path);
	if (victim->fd < 0)
	{
		ReleaseExternalFD();
		return -1;
	}
	victim->relid = RelationGetRelid(rel);
	victim->node = rel->rd_node;
	victim->segno = segno;
	victim->lastuse = ++use_clock;
	return victim->fd;
}

/*
 * Is block blkno of rel's main fork in the page cache?  Returns
 * FT_OSCACHE_UNKNOWN where the kernel cannot tell.
 */
FtOsCacheAnswer
ft_block_in_os_cache(Relation rel, BlockNumber blkno)
{
#ifdef RWF_NOWAIT
	PGAlignedBlock buf;
	struct iovec iov;
	int			fd = segment_fd(rel, blkno);
	ssize_t		n;

	if (fd < 0)
		return FT_OSCACHE_UNKNOWN;
	iov.iov_base = buf.data;
	iov.iov_len = BLCKSZ;
	n = preadv2(fd, &iov, 1,
				(off_t) (blkno % ((BlockNumber) RELSEG_SIZE)) * BLCKSZ,
				RWF_NOWAIT);
	if (n == BLCKSZ)
		return FT_OSCACHE_YES;
	if (n < 0 && errno == EAGAIN)
		return FT_OSCACHE_NO;
	return FT_OSCACHE_UNKNOWN;
#else
	return FT_OSCACHE_UNKNOWN;
#endif
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
	a = ft_block_in_os_cache(tree->rel, blkno);
	if (a == FT_OSCACHE_UNKNOWN)
		return false;
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

/* Close this backend's descriptors of a relation (relcache invalidation) */
void
ft_oscache_invalidate(Oid relid)
{
	int			i;

	if (!fds_init)
		return;
	for (i = 0; i < FT_OSCACHE_FDS; i++)
		if (fds[i].fd >= 0 && (fds[i].relid == relid || relid == InvalidOid))
			close_slot(&fds[i]);
}
