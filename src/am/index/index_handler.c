/*-------------------------------------------------------------------------
 *
 * index_handler.c
 *	  The index access method handler and reloptions.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/amapi.h"
#include "access/reloptions.h"
#include "am/index/fractam_index.h"
#include "commands/defrem.h"
#include "commands/vacuum.h"
#include "utils/guc.h"

PG_FUNCTION_INFO_V1(fractam_index_handler);

static relopt_kind fractam_relopt_kind;

bytea *
fractam_options(Datum reloptions, bool validate)
{
	static const relopt_parse_elt tab[] = {
		{"fanout", RELOPT_TYPE_INT, offsetof(FractamOptions, fanout)},
		{"fillfactor", RELOPT_TYPE_INT, offsetof(FractamOptions, fillfactor)},
		{"buffering", RELOPT_TYPE_BOOL, offsetof(FractamOptions, buffering)},
	};

	return (bytea *) build_reloptions(reloptions, validate,
									  fractam_relopt_kind,
									  sizeof(FractamOptions),
									  tab, lengthof(tab));
}

Oid
fractam_index_am_oid(void)
{
	static Oid	amoid = InvalidOid;

	if (!OidIsValid(amoid))
		amoid = get_index_am_oid(FRACTAM_INDEX_AM_NAME, false);
	return amoid;
}

Datum
fractam_index_handler(PG_FUNCTION_ARGS)
{
	IndexAmRoutine *amroutine = makeNode(IndexAmRoutine);

	amroutine->amstrategies = BTMaxStrategyNumber;
	amroutine->amsupport = FRACTAM_NPROC;
	amroutine->amoptsprocnum = 0;
	amroutine->amcanorder = true;
	amroutine->amcanorderbyop = false;
	amroutine->amcanbackward = true;
	amroutine->amcanunique = true;
	amroutine->amcanmulticol = true;
	amroutine->amoptionalkey = true;
	amroutine->amsearcharray = false;
	amroutine->amsearchnulls = true;
	amroutine->amstorage = false;
	amroutine->amclusterable = true;
	amroutine->ampredlocks = false;
	amroutine->amcanparallel = false;
	amroutine->amcaninclude = true;
	amroutine->amusemaintenanceworkmem = false;
	amroutine->amparallelvacuumoptions =
		VACUUM_OPTION_PARALLEL_BULKDEL | VACUUM_OPTION_PARALLEL_COND_CLEANUP;
	amroutine->amkeytype = InvalidOid;

	amroutine->ambuild = fractam_build;
	amroutine->ambuildempty = fractam_buildempty;
	amroutine->aminsert = fractam_insert;
	amroutine->ambulkdelete = fractam_bulkdelete;
	amroutine->amvacuumcleanup = fractam_vacuumcleanup;
	amroutine->amcanreturn = fractam_canreturn;
	amroutine->amcostestimate = fractam_costestimate;
	amroutine->amoptions = fractam_options;
	amroutine->amproperty = NULL;
	amroutine->ambuildphasename = NULL;
	amroutine->amvalidate = fractam_validate;
	amroutine->amadjustmembers = NULL;
	amroutine->ambeginscan = fractam_beginscan;
	amroutine->amrescan = fractam_rescan;
	amroutine->amgettuple = fractam_gettuple;
	amroutine->amgetbitmap = fractam_getbitmap;
	amroutine->amendscan = fractam_endscan;
	amroutine->ammarkpos = NULL;
	amroutine->amrestrpos = NULL;
	amroutine->amestimateparallelscan = NULL;
	amroutine->aminitparallelscan = NULL;
	amroutine->amparallelrescan = NULL;

	PG_RETURN_POINTER(amroutine);
}

/*
 * At library load: the index reloptions, the index settings, the unique
 * check's locks and the executor hook for ON CONFLICT.
 */
void
fractam_index_init(void)
{
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

	fractam_unique_locks_init();
}
