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
#include "am/fractam.h"
#include "am/index/fractam_index.h"
#include "utils/rel.h"
#include "commands/defrem.h"
#include "commands/vacuum.h"
#include "utils/guc.h"

PG_FUNCTION_INFO_V1(fractam_index_handler);

static relopt_kind fractam_relopt_kind;

/* fractam.default_compression: for relations created without the option */
int			fractam_default_compression = FT_CODEC_NONE;

static const struct config_enum_entry compression_options[] = {
	{"none", FT_CODEC_NONE, false},
	{"lz4", FT_CODEC_LZ4, false},
	{"zstd", FT_CODEC_ZSTD, false},
	{NULL, 0, false}
};

/*
 * The compression option names a method fractam knows (an index's, and a
 * table's: table_options.c)
 */
void
fractam_validate_compression(const char *value)
{
	FtCodecId	codec;
	int			level;

	if (value != NULL && !ft_codec_lookup(value, &codec, &level))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for fractam option \"compression\": \"%s\"",
						value),
				 errdetail("Valid values are \"none\", \"lz4\" and \"zstd\".")));
}

/* compression_level lies in the range of the method it applies to */
void
fractam_check_compression_level(int codec, int level)
{
	int			min;
	int			max;

	if (level == 0)
		return;
	ft_codec_level_range(codec, &min, &max);
	if (codec == FT_CODEC_NONE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("fractam option \"compression_level\" needs a compression method"),
				 errdetail("compression is \"none\".")));
	if (level < min || level > max)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("compression_level %d is out of range for %s",
						level, ft_codec_name(codec)),
				 errdetail("Valid levels for %s are %d to %d.",
						   ft_codec_name(codec), min, max)));
}

bytea *
fractam_options(Datum reloptions, bool validate)
{
	static const relopt_parse_elt tab[] = {
		{"fanout", RELOPT_TYPE_INT, offsetof(FractamOptions, fanout)},
		{"fillfactor", RELOPT_TYPE_INT, offsetof(FractamOptions, fillfactor)},
		{"buffering", RELOPT_TYPE_BOOL, offsetof(FractamOptions, buffering)},
		{"compression", RELOPT_TYPE_STRING, offsetof(FractamOptions, compression)},
		{"compression_level", RELOPT_TYPE_INT, offsetof(FractamOptions, compression_level)},
	};
	FractamOptions *opts;

	opts = (FractamOptions *) build_reloptions(reloptions, validate,
											   fractam_relopt_kind,
											   sizeof(FractamOptions),
											   tab, lengthof(tab));
	if (validate && opts != NULL)
	{
		FtCodecId	codec = FT_CODEC_NONE;
		int			level;

		if (opts->compression != 0)
			(void) ft_codec_lookup((char *) opts + opts->compression,
								   &codec, &level);
		fractam_check_compression_level(codec, opts->compression_level);
	}
	return (bytea *) opts;
}

/*
 * How an index's leaves written from now on are compressed: its
 * compression option (none without it: an index created while
 * fractam.default_compression named a method was given the option, see
 * utility_hook.c); level 0 means the method's default.
 */
void
fractam_index_codec(Relation index, FtCodecId *codec, int *level)
{
	FractamOptions *opts = (FractamOptions *) index->rd_options;
	int			default_level = 0;

	*codec = FT_CODEC_NONE;
	*level = 0;
	if (opts == NULL || opts->compression == 0)
		return;
	if (!ft_codec_lookup((char *) opts + opts->compression, codec,
						 &default_level))
		*codec = FT_CODEC_NONE; /* validated when set: cannot happen */
	*level = opts->compression_level != 0 ? opts->compression_level : default_level;
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
	add_string_reloption(fractam_relopt_kind, "compression",
						 "Compression of leaves written from now on: none, lz4 or zstd",
						 NULL, fractam_validate_compression, ShareUpdateExclusiveLock);
	add_int_reloption(fractam_relopt_kind, "compression_level",
					  "Level of the compression method (0: its default)",
					  0, 0, 22, ShareUpdateExclusiveLock);

	DefineCustomEnumVariable("fractam.default_compression",
							 "Compression of fractam relations created without the compression option.",
							 NULL,
							 &fractam_default_compression, FT_CODEC_NONE,
							 compression_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);

	DefineCustomBoolVariable("fractam.direct_apply",
							 "Apply inserts directly to leaves that are in shared buffers.",
							 "When off, every insert below the right edge is buffered; "
							 "meant for testing the buffering and flush paths.",
							 &fractam_direct_apply, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);

	DefineCustomIntVariable("fractam.debug_unique_delay",
							"Microseconds a unique insert sleeps between its check and its insertion (testing).",
							"After a search, and before an insert whose leaf was full after "
							"its check starts over: widens the windows in which concurrent "
							"inserters of the same key could slip in, so that tests of the "
							"unique check's locking fail if it lets them.",
							&fractam_debug_unique_delay, 0, 0, 10000000,
							PGC_SUSET, GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);

	fractam_unique_locks_init();
}
