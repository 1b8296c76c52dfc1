/*-------------------------------------------------------------------------
 *
 * fractam_module.c
 *	  Library initialization: the preload check, the WAL resource manager,
 *	  reloptions, shared memory and hooks.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/reloptions.h"
#include "am/index/fractam_index.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "wal/ft_xlog.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

relopt_kind fractam_relopt_kind;
bool		fractam_direct_apply = true;

static const struct config_enum_entry page_cache_probe_options[] = {
	{"off", FT_PAGE_CACHE_PROBE_OFF, false},
	{"on", FT_PAGE_CACHE_PROBE_ON, false},
	{"assume", FT_PAGE_CACHE_PROBE_ASSUME, false},
	{NULL, 0, false}
};

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static LWLockPadded *unique_locks = NULL;

static RmgrData fractam_rmgr = {
	.rm_name = FT_RMGR_NAME,
	.rm_redo = ft_redo,
	.rm_desc = ft_desc,
	.rm_identify = ft_identify,
	.rm_startup = NULL,			/* redo keeps no state between records */
	.rm_cleanup = NULL,
	.rm_mask = ft_mask,
	.rm_decode = NULL			/* index records carry nothing to decode */
};

static void
fractam_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestNamedLWLockTranche("fractam_unique", FRACTAM_UNIQUE_LOCKS);
}

/*
 * Striped locks that serialize inserters of equal keys into a unique
 * index (see index_insert.c).
 */
LWLockPadded *
fractam_unique_locks(void)
{
	if (unique_locks == NULL)
		unique_locks = GetNamedLWLockTranche("fractam_unique");
	return unique_locks;
}

/*
 * Cached routing pages of an index must not outlive its relation file:
 * REINDEX, TRUNCATE and DROP all invalidate the index's relcache entry.
 */
static void
fractam_relcache_callback(Datum arg, Oid relid)
{
	ft_routecache_invalidate(relid);
	ft_oscache_invalidate(relid);
}

void
_PG_init(void)
{
	/*
	 * WAL records of a custom resource manager can only be replayed if the
	 * library is loaded before recovery starts, so fractam refuses to run
	 * any other way.
	 */
	if (!process_shared_preload_libraries_in_progress)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("fractam must be loaded via shared_preload_libraries"),
				 errhint("Add fractam to shared_preload_libraries in postgresql.conf and restart the server.")));

	RegisterCustomRmgr(RM_FRACTAM_ID, &fractam_rmgr);

	fractam_relopt_kind = add_reloption_kind();
	add_int_reloption(fractam_relopt_kind, "fanout",
					  "Maximum number of leaves under one buffer node",
					  FRACTAM_DEFAULT_FANOUT, 2, 64, AccessExclusiveLock);
	add_int_reloption(fractam_relopt_kind, "fillfactor",
					  "Packs leaf pages only to this percentage on build and ascending splits",
					  FRACTAM_DEFAULT_FILLFACTOR, 10, 100, ShareUpdateExclusiveLock);
	add_bool_reloption(fractam_relopt_kind, "buffering",
					   "Buffer changes for leaves that are not in memory",
					   true, ShareUpdateExclusiveLock);

	DefineCustomBoolVariable("fractam.direct_apply",
							 "Apply inserts directly to leaves that are in shared buffers.",
							 "When off, every insert below the right edge is buffered; "
							 "meant for testing the buffering and flush paths.",
							 &fractam_direct_apply, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);

	DefineCustomIntVariable("fractam.routing_cache_pages",
							"Routing pages each backend keeps private copies of.",
							"Saves descents the shared-buffer lookups of the levels "
							"above the buffer nodes; 0 disables the cache.",
							&ft_routing_cache_pages, 256, 0, 65536,
							PGC_USERSET, GUC_UNIT_BLOCKS, NULL, NULL, NULL);
	DefineCustomEnumVariable("fractam.page_cache_probe",
							 "Treat leaves in the kernel's page cache as cached.",
							 "on: when most leaves outside shared buffers are in the page "
							 "cache (sampled with mincore()), apply inserts to them "
							 "directly and flush buffered messages on the way; off: only "
							 "leaves in shared buffers count; assume: every index is in "
							 "memory (for testing).",
							 &ft_page_cache_probe, FT_PAGE_CACHE_PROBE_ON,
							 page_cache_probe_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);

	CacheRegisterRelcacheCallback(fractam_relcache_callback, (Datum) 0);

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = fractam_shmem_request;

	fractam_install_utility_hook();
	fractam_install_executor_hook();
	MarkGUCPrefixReserved("fractam");
}
