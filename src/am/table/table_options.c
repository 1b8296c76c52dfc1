/*-------------------------------------------------------------------------
 *
 * table_options.c
 *	  Storage parameters of fractam tables: CREATE TABLE ... USING fractam
 *	  WITH (fanout = 8), ALTER TABLE ... SET / RESET (fanout).
 *
 * PostgreSQL 15's table access method API has no reloptions callback:
 * CREATE TABLE, CREATE TABLE AS and ALTER TABLE SET / RESET check every
 * storage parameter of a table against heap's list and refuse any other.
 * So the utility hook (src/am/utility_hook.c) takes fractam's parameters
 * out of those statements before standard processing and, once it ran,
 * writes them into pg_class.reloptions, checked against fractam's own
 * list.  There pg_dump dumps them with the table ("WITH (fanout='8')",
 * accepted again on restore), and ROLLBACK undoes them.  The relcache's
 * parse of reloptions (without validation) passes over names heap does
 * not know, so heap's parameters (fillfactor, autovacuum_*, toast.*) work
 * beside them unchanged.
 *
 * While the statement runs, its options are "pending": the tree of the
 * table it creates or alters (and of the new file a rewriting ALTER TABLE
 * builds) takes them from here, not from pg_class, so that CREATE TABLE AS
 * loads and ALTER TABLE rewrites with them.  The table a CREATE made is
 * known by its OID, from the object access hook, never by looking its
 * name up again (a temporary table of the same name would shadow it).
 *
 * ALTER TABLE: the table is locked first, as strongly as the whole
 * statement needs (no lock upgrade later) and with PostgreSQL's checks.
 * The subcommands are applied in order.  A statement left with no
 * subcommand keeps an empty SET, so that PostgreSQL still runs its checks
 * (read-only transaction, ownership, event triggers, IF EXISTS).  When
 * heap's SET / RESET remains, fractam's stored parameters are out of
 * pg_class while it runs (heap's validation would refuse them), and are
 * put back after.  A table whose access method changes away from fractam
 * drops them.
 *
 * A table created without a compression method takes
 * fractam.default_compression's (unless it is "none"), written into its
 * parameters like one given, so that it stays and pg_dump shows it; a
 * CREATE TABLE that makes no fractam table drops it silently, and
 * pg_upgrade's (binary upgrade) takes none.
 *
 * Only tables: an ALTER TABLE naming an index goes to the index's own
 * options (fractam indexes have a fanout too); materialized views,
 * partitioned and foreign tables refuse them, as heap does.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/reloptions.h"
#include "access/table.h"
#include "access/tableam.h"
#include "am/fractam.h"
#include "am/table/fractam_table.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_class.h"
#include "commands/defrem.h"
#include "commands/tablecmds.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

static relopt_kind table_relopt_kind;

/* fractam's table parameters; add new ones here and to parse_options */
static const char *const table_option_names[] = {"fanout", "compression",
"compression_level"};

/* What the utility hook does once standard processing has run */
struct FractamTableOptionsWork
{
	bool		creating;		/* CREATE TABLE (AS): relid comes from the
								 * object access hook */
	Oid			relid;			/* the table, once known */
	Oid			transient;		/* a rewrite's new relation file */
	List	   *final;			/* fractam's parameters after the statement */
	bool		defaulted;		/* final's last is fractam.default_compression's */
	bool		changed;		/* the statement sets or resets them */
	bool		stripped;		/* taken out of pg_class while it runs */
	bool		drop_all;		/* the access method changes from fractam */
	FractamTableOptions parsed; /* final, as the tree uses them */
	int			depth;			/* utility nesting level the statement runs at */
	FractamTableOptionsWork *outer; /* the enclosing statement's, if any */
};

/* the statement whose options are pending (a stack, through the hook) */
static FractamTableOptionsWork *pending = NULL;
static object_access_hook_type prev_object_access_hook = NULL;

static void load_defs(List *defs, FractamTableOptions *opts, bool validate);

static bool
is_table_option(DefElem *def)
{
	int			i;

	if (def->defnamespace != NULL)
		return false;
	for (i = 0; i < lengthof(table_option_names); i++)
		if (strcmp(def->defname, table_option_names[i]) == 0)
			return true;
	return false;
}

/* Split defs into fractam's (appended to *ours) and the rest (returned) */
static List *
split_options(List *defs, List **ours)
{
	List	   *rest = NIL;
	ListCell   *lc;

	foreach(lc, defs)
	{
		DefElem    *def = lfirst(lc);

		if (is_table_option(def))
			*ours = lappend(*ours, def);
		else
			rest = lappend(rest, def);
	}
	return rest;
}

static bool
has_table_option(List *defs)
{
	ListCell   *lc;

	foreach(lc, defs)
		if (is_table_option(lfirst(lc)))
			return true;
	return false;
}

static bool
is_relopts_cmd(AlterTableCmd *cmd)
{
	return cmd->subtype == AT_SetRelOptions ||
		cmd->subtype == AT_ResetRelOptions ||
		cmd->subtype == AT_ReplaceRelOptions;
}

/* defs without the parameter named name */
static List *
without_option(List *defs, const char *name)
{
	List	   *result = NIL;
	ListCell   *lc;

	foreach(lc, defs)
		if (strcmp(((DefElem *) lfirst(lc))->defname, name) != 0)
			result = lappend(result, lfirst(lc));
	return result;
}

/* fractam's parameters stored for relid (a list of DefElems) */
static List *
stored_options(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	List	   *ours = NIL;
	Datum		datum;
	bool		isnull;

	if (!HeapTupleIsValid(tup))
		return NIL;
	datum = SysCacheGetAttr(RELOID, tup, Anum_pg_class_reloptions, &isnull);
	if (!isnull)
		(void) split_options(untransformRelOptions(datum), &ours);
	ReleaseSysCache(tup);
	return ours;
}

/* Is relid a fractam table?  (Its relcache entry: also one just created.) */
static bool
is_fractam_table(Oid relid)
{
	Relation	rel = RelationIdGetRelation(relid);
	bool		result;

	if (!RelationIsValid(rel))
		return false;
	result = rel->rd_rel->relkind == RELKIND_RELATION && fractam_is_table(rel);
	RelationClose(rel);
	return result;
}

/*
 * Object access hook: the relation a pending CREATE makes, or the new file
 * a pending ALTER's rewrite builds (an internal relation).
 */
static void
options_object_access(ObjectAccessType access, Oid classId, Oid objectId,
					  int subId, void *arg)
{
	bool		internal;
	Relation	rel;
	char		relkind;
	Oid			relrewrite;

	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);

	/*
	 * Only what the statement itself creates: DDL of event triggers or
	 * functions it runs goes through a nested utility call.
	 */
	if (pending == NULL || access != OAT_POST_CREATE ||
		classId != RelationRelationId || subId != 0 ||
		fractam_utility_depth() != pending->depth)
		return;
	internal = arg != NULL && ((ObjectAccessPostCreate *) arg)->is_internal;
	if (pending->creating ? (OidIsValid(pending->relid) || internal) :
		(!OidIsValid(pending->relid) || OidIsValid(pending->transient) || !internal))
		return;
	rel = RelationIdGetRelation(objectId);
	if (!RelationIsValid(rel))
		return;
	relkind = rel->rd_rel->relkind;
	relrewrite = rel->rd_rel->relrewrite;
	RelationClose(rel);
	if (pending->creating)
	{
		/* a table (sequences of serial columns come first) */
		if (relkind == RELKIND_RELATION || relkind == RELKIND_PARTITIONED_TABLE ||
			relkind == RELKIND_MATVIEW || relkind == RELKIND_FOREIGN_TABLE)
			pending->relid = objectId;
	}
	else if (relrewrite == pending->relid && is_fractam_table(objectId))
		pending->transient = objectId;	/* make_new_heap's */
}

void
fractam_table_options_init(void)
{
	table_relopt_kind = add_reloption_kind();
	add_int_reloption(table_relopt_kind, "fanout",
					  "Maximum number of children of an internal node of a fractam table",
					  FRACTAM_TABLE_DEFAULT_FANOUT, 2, 64, AccessExclusiveLock);
	add_string_reloption(table_relopt_kind, "compression",
						 "How VACUUM compresses the cold leaves of a fractam table (none, lz4, zstd)",
						 NULL, fractam_validate_compression, AccessExclusiveLock);
	add_int_reloption(table_relopt_kind, "compression_level",
					  "Level of the compression method (0: its default)",
					  0, 0, 22, AccessExclusiveLock);
	prev_object_access_hook = object_access_hook;
	object_access_hook = options_object_access;
}

/* Is the statement one fractam_table_options_rewrite changes? */
bool
fractam_table_options_needs_rewrite(Node *stmt)
{
	ListCell   *lc;

	switch (nodeTag(stmt))
	{
		case T_CreateStmt:
			return has_table_option(((CreateStmt *) stmt)->options) ||
				fractam_default_compression != FT_CODEC_NONE;
		case T_CreateTableAsStmt:
			return ((CreateTableAsStmt *) stmt)->objtype == OBJECT_TABLE &&
				((CreateTableAsStmt *) stmt)->into != NULL &&
				(has_table_option(((CreateTableAsStmt *) stmt)->into->options) ||
				 fractam_default_compression != FT_CODEC_NONE);
		case T_AlterTableStmt:
			{
				AlterTableStmt *as = (AlterTableStmt *) stmt;
				Oid			relid;
				bool		relopts = false;
				bool		set_am = false;

				if (as->objtype != OBJECT_TABLE)
					return false;
				foreach(lc, as->cmds)
				{
					AlterTableCmd *cmd = lfirst(lc);

					set_am |= cmd->subtype == AT_SetAccessMethod;
					relopts |= is_relopts_cmd(cmd);
				}
				if (!set_am && !relopts)
					return false;
				/* plain tables only: an index has options of its own */
				relid = RangeVarGetRelid(as->relation, NoLock, true);
				if (!OidIsValid(relid) || get_rel_relkind(relid) != RELKIND_RELATION)
					return false;
				/* a heap table staying heap: heap refuses fanout itself */
				return set_am || is_fractam_table(relid);
			}
		default:
			return false;
	}
}

/* Rewrite a CREATE TABLE (AS): its options without fractam's */
static void
rewrite_create(List **options, FractamTableOptionsWork *work)
{
	List	   *ours = NIL;

	*options = split_options(*options, &ours);
	/* pg_upgrade makes tables as they were */
	if (fractam_default_compression != FT_CODEC_NONE && !IsBinaryUpgrade &&
		list_length(without_option(ours, "compression")) == list_length(ours))
	{
		ours = lappend(ours, makeDefElem("compression",
										 (Node *) makeString(pstrdup(ft_codec_name(fractam_default_compression))),
										 -1));
		work->defaulted = true;
	}
	work->creating = true;
	work->changed = true;
	work->final = ours;
}

/*
 * Rewrite an ALTER TABLE: lock and check the table, apply fractam's
 * subcommands in order to its stored parameters, leave the rest.
 */
static void
rewrite_alter(AlterTableStmt *as, FractamTableOptionsWork *work)
{
	LOCKMODE	lockmode = AlterTableGetLockLevel(as->cmds);
	List	   *cmds = NIL;
	bool		heap_relopts = false;
	ListCell   *lc;
	ListCell   *dc;

	foreach(lc, as->cmds)
		if (is_relopts_cmd(lfirst(lc)) && has_table_option((List *) ((AlterTableCmd *) lfirst(lc))->def))
			lockmode = Max(lockmode, AccessExclusiveLock);

	/* before any catalog change of ours: PostgreSQL's own checks */
	PreventCommandIfReadOnly("ALTER TABLE");
	PreventCommandIfParallelMode("ALTER TABLE");
	PreventCommandDuringRecovery("ALTER TABLE");
	work->relid = AlterTableLookupRelation(as, lockmode);
	if (!OidIsValid(work->relid))
		return;					/* IF EXISTS: PostgreSQL says so */

	work->final = stored_options(work->relid);
	foreach(lc, as->cmds)
	{
		AlterTableCmd *cmd = lfirst(lc);
		List	   *ours = NIL;

		if (cmd->subtype == AT_SetAccessMethod)
			work->drop_all = strcmp(cmd->name, "fractam") != 0;
		if (!is_relopts_cmd(cmd))
		{
			cmds = lappend(cmds, cmd);
			continue;
		}
		cmd->def = (Node *) split_options((List *) cmd->def, &ours);
		if (ours != NIL)
			work->changed = true;
		if (cmd->subtype == AT_ReplaceRelOptions)
			work->final = NIL;
		foreach(dc, ours)
		{
			DefElem    *def = lfirst(dc);

			if (cmd->subtype == AT_ResetRelOptions && def->arg != NULL)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("RESET must not include values for parameters")));
			work->final = without_option(work->final, def->defname);
			if (cmd->subtype != AT_ResetRelOptions)
				work->final = lappend(work->final, def);
		}
		if (cmd->def == NULL && cmd->subtype != AT_ReplaceRelOptions)
			continue;			/* only fractam's */
		heap_relopts = true;
		cmds = lappend(cmds, cmd);
	}
	if (cmds == NIL)
	{
		/* an empty SET: PostgreSQL checks the statement and does nothing */
		AlterTableCmd *cmd = makeNode(AlterTableCmd);

		cmd->subtype = AT_SetRelOptions;
		cmd->def = NULL;
		cmds = list_make1(cmd);
	}
	as->cmds = cmds;

	/* heap's SET / RESET would refuse fractam's stored parameters */
	if (heap_relopts)
	{
		List	   *stored = stored_options(work->relid);

		if (stored != NIL)
		{
			fractam_reloptions_update(work->relid, NIL, stored);
			CommandCounterIncrement();
			work->stripped = true;
		}
	}
}

/*
 * Take fractam's parameters out of the statement (a copy the caller owns)
 * and note what to do once it ran (fractam_table_options_apply).  The
 * caller runs the statement between fractam_table_options_push and _pop.
 */
FractamTableOptionsWork *
fractam_table_options_rewrite(Node *stmt)
{
	FractamTableOptionsWork *work = palloc0(sizeof(FractamTableOptionsWork));

	if (IsA(stmt, CreateStmt))
		rewrite_create(&((CreateStmt *) stmt)->options, work);
	else if (IsA(stmt, CreateTableAsStmt))
		rewrite_create(&((CreateTableAsStmt *) stmt)->into->options, work);
	else
		rewrite_alter((AlterTableStmt *) stmt, work);

	/* bad values fail before anything is done */
	load_defs(work->drop_all ? NIL : work->final,
									&work->parsed, true);
	return work;
}

/* The statement runs: its relations use its options (see the header) */
void
fractam_table_options_push(FractamTableOptionsWork *work)
{
	/* standard processing runs one utility level deeper than this call */
	work->depth = fractam_utility_depth() + 1;
	work->outer = pending;
	pending = work;
}

void
fractam_table_options_pop(FractamTableOptionsWork *work)
{
	Assert(pending == work);
	pending = work->outer;
}

/*
 * Change relid's pg_class.reloptions with no validation (the caller's):
 * set the parameters of defs set, remove those named in reset, keep the
 * others.  Transactional; the caller makes it visible.
 */
void
fractam_reloptions_update(Oid relid, List *set, List *reset)
{
	Relation	pgclass;
	HeapTuple	tup;
	HeapTuple	newtup;
	Datum		datum;
	bool		isnull;
	Datum		newopts;
	Datum		values[Natts_pg_class] = {0};
	bool		nulls[Natts_pg_class] = {0};
	bool		replace[Natts_pg_class] = {0};

	pgclass = table_open(RelationRelationId, RowExclusiveLock);
	tup = SearchSysCacheCopy1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	datum = SysCacheGetAttr(RELOID, tup, Anum_pg_class_reloptions, &isnull);
	newopts = isnull ? (Datum) 0 : datum;
	if (reset != NIL)
	{
		List	   *names = NIL;
		ListCell   *lc;

		/* a reset names parameters without values */
		foreach(lc, reset)
		{
			DefElem    *def = lfirst(lc);

			names = lappend(names, makeDefElemExtended(def->defnamespace,
													   def->defname, NULL,
													   DEFELEM_UNSPEC,
													   def->location));
		}
		newopts = transformRelOptions(newopts, names, NULL, NULL, false, true);
	}
	if (set != NIL)
		newopts = transformRelOptions(newopts, set, NULL, NULL, false, false);
	if (newopts != (Datum) 0)
		values[Anum_pg_class_reloptions - 1] = newopts;
	else
		nulls[Anum_pg_class_reloptions - 1] = true;
	replace[Anum_pg_class_reloptions - 1] = true;
	newtup = heap_modify_tuple(tup, RelationGetDescr(pgclass), values, nulls,
							   replace);
	CatalogTupleUpdate(pgclass, &newtup->t_self, newtup);
	heap_freetuple(newtup);
	heap_freetuple(tup);
	table_close(pgclass, RowExclusiveLock);
}

/* Parse fractam's parameters (validate: refuse bad values) */
static FractamTableOptions *
parse_options(List *ours, bool validate)
{
	static const relopt_parse_elt tab[] = {
		{"fanout", RELOPT_TYPE_INT, offsetof(FractamTableOptions, fanout)},
		{"compression", RELOPT_TYPE_STRING,
		offsetof(FractamTableOptions, compression_offset)},
		{"compression_level", RELOPT_TYPE_INT,
		offsetof(FractamTableOptions, compression_level)},
	};
	Datum		datum = transformRelOptions((Datum) 0, ours, NULL, NULL,
											false, false);

	return (FractamTableOptions *) build_reloptions(datum, validate,
													table_relopt_kind,
													sizeof(FractamTableOptions),
													tab, lengthof(tab));
}

/* After standard processing: write what fractam_table_options_rewrite noted */
void
fractam_table_options_apply(FractamTableOptionsWork *work)
{
	List	   *stored;

	if (!OidIsValid(work->relid))
		return;					/* nothing created (IF NOT EXISTS), or gone */
	if (!work->changed && !work->stripped && !work->drop_all)
		return;

	/* set on a relation that is not (or no longer) a fractam table */
	if (work->changed && work->final != NIL && !is_fractam_table(work->relid))
	{
		const char *name = ((DefElem *) linitial(work->final))->defname;
		const char *relname;

		/* only fractam.default_compression's: not for this table */
		if (work->defaulted && list_length(work->final) == 1)
			return;
		relname = get_rel_name(work->relid);
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unrecognized parameter \"%s\"", name),
				 errdetail("\"%s\" is a storage parameter of fractam tables, and \"%s\" is not one.",
						   name, relname ? relname : "?")));
	}

	/* replace what pg_class holds of fractam's by the statement's result */
	stored = stored_options(work->relid);
	if (stored != NIL)
	{
		fractam_reloptions_update(work->relid, NIL, stored);
		CommandCounterIncrement();
	}
	if (!work->drop_all && work->final != NIL)
	{
		fractam_reloptions_update(work->relid, work->final, NIL);
		CommandCounterIncrement();
	}
}

/* defs parsed into opts (defaults for those not given) */
static void
load_defs(List *defs, FractamTableOptions *opts,
								bool validate)
{
	opts->fanout = FRACTAM_TABLE_DEFAULT_FANOUT;
	opts->compression_offset = 0;
	opts->compression_level = 0;
	opts->codec = FT_CODEC_NONE;
	if (defs != NIL)
	{
		FractamTableOptions *parsed = parse_options(defs, validate);

		if (parsed)
		{
			int			deflevel = 0;

			opts->fanout = parsed->fanout;
			opts->compression_level = parsed->compression_level;
			if (parsed->compression_offset != 0 &&
				!ft_codec_lookup((char *) parsed + parsed->compression_offset,
								 &opts->codec, &deflevel))
				opts->codec = FT_CODEC_NONE;	/* validated when set */
			if (validate)
				fractam_check_compression_level(opts->codec,
												opts->compression_level);
			if (opts->compression_level == 0)
				opts->compression_level = deflevel;
			pfree(parsed);
		}
	}
}

/*
 * fractam's parameters of a table as its tree uses them: the pending
 * statement's for the table it creates or alters, else pg_class's.
 */
void
fractam_table_options_load(Relation rel, FractamTableOptions *opts)
{
	Oid			relid = RelationGetRelid(rel);
	FractamTableOptionsWork *w;

	/* the innermost statement that has it (nested ones: see the hook) */
	for (w = pending; w != NULL; w = w->outer)
		if (OidIsValid(w->relid) &&
			(w->relid == relid || w->transient == relid))
		{
			*opts = w->parsed;
			return;
		}
	load_defs(stored_options(relid), opts, false);
}

/*
 * May relid's options change before the pending statement ends?  Then the
 * table cache must not keep what it loads: the statement's own table (or
 * any, while the one a CREATE is making is not known yet) and its
 * rewrite's new file, of every statement on the stack.
 */
bool
fractam_table_options_pending(Oid relid)
{
	FractamTableOptionsWork *w;

	for (w = pending; w != NULL; w = w->outer)
		if ((w->creating && !OidIsValid(w->relid)) ||
			w->relid == relid || w->transient == relid)
			return true;
	return false;
}

/*
 * A work that only learns which relation the CREATE it wraps makes (for
 * the partitioned-table mark, table_partition.c).
 */
FractamTableOptionsWork *
fractam_table_options_capture(void)
{
	FractamTableOptionsWork *work = palloc0(sizeof(FractamTableOptionsWork));

	work->creating = true;
	load_defs(NIL, &work->parsed, false);
	return work;
}

/* The relation the wrapped CREATE made (InvalidOid: none) */
Oid
fractam_table_options_relid(FractamTableOptionsWork *work)
{
	return work->relid;
}
