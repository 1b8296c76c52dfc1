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
