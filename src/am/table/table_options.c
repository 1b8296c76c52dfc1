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
 * beside them unchanged.  While a standard ALTER TABLE SET / RESET runs,
 * fractam's parameters are out of pg_class (within the transaction), as
 * heap's validation would refuse them there too; they are put back after.
 * A table whose access method changes to another drops them.
 *
 * The table's tree reads them through the backend's table cache
 * (fractam_table_tree), reloaded after each invalidation of the table.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/reloptions.h"
#include "access/table.h"
#include "am/table/fractam_table.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "commands/defrem.h"
#include "commands/tablecmds.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

static relopt_kind table_relopt_kind;

/* fractam's table parameters; add new ones here and to load_options */
static const char *const table_option_names[] = {"fanout"};

/* What the utility hook does once standard processing has run */
struct FractamTableOptionsWork
{
	RangeVar   *rel;			/* the table */
	bool		missing_ok;		/* ALTER TABLE IF EXISTS */
	bool		skip;			/* CREATE ... IF NOT EXISTS of a table that
								 * exists: leave it alone */
	LOCKMODE	lockmode;
	List	   *set;			/* DefElems to set */
	List	   *reset;			/* names to reset */
	List	   *saved;			/* taken out of pg_class for the statement */
	bool		drop_all;		/* the access method changes from fractam */
};

void
fractam_table_options_init(void)
{
	table_relopt_kind = add_reloption_kind();
	add_int_reloption(table_relopt_kind, "fanout",
					  "Maximum number of children of an internal node of a fractam table",
					  FRACTAM_TABLE_DEFAULT_FANOUT, 2, 64, AccessExclusiveLock);
}

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

/* Split defs into fractam's (*ours) and the rest (returned) */
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

/* Is the statement one fractam_table_options_rewrite changes? */
bool
fractam_table_options_needs_rewrite(Node *stmt)
{
	ListCell   *lc;

	switch (nodeTag(stmt))
	{
		case T_CreateStmt:
			return has_table_option(((CreateStmt *) stmt)->options);
		case T_CreateTableAsStmt:
			return ((CreateTableAsStmt *) stmt)->into != NULL &&
				has_table_option(((CreateTableAsStmt *) stmt)->into->options);
		case T_AlterTableStmt:
			{
				AlterTableStmt *as = (AlterTableStmt *) stmt;
				Oid			relid;

				if (as->objtype != OBJECT_TABLE)
					return false;
				foreach(lc, as->cmds)
				{
					AlterTableCmd *cmd = lfirst(lc);

					if (cmd->subtype == AT_SetAccessMethod ||
						(is_relopts_cmd(cmd) &&
						 has_table_option((List *) cmd->def)))
						return true;
				}
				/* other SET / RESET: are fractam's stored on the table? */
				foreach(lc, as->cmds)
				{
					if (!is_relopts_cmd(lfirst(lc)))
						continue;
					relid = RangeVarGetRelid(as->relation, NoLock, true);
					return OidIsValid(relid) && stored_options(relid) != NIL;
				}
				return false;
			}
		default:
			return false;
	}
}

/*
 * Take fractam's parameters out of the statement (a copy the caller owns)
 * and note what to do once it ran (fractam_table_options_apply).  Sets
 * *run to false when nothing is left for standard processing.
 */
FractamTableOptionsWork *
fractam_table_options_rewrite(Node *stmt, bool *run)
{
	FractamTableOptionsWork *work = palloc0(sizeof(FractamTableOptionsWork));

	*run = true;
	work->lockmode = AccessExclusiveLock;
	if (IsA(stmt, CreateStmt))
	{
		CreateStmt *cs = (CreateStmt *) stmt;

		work->rel = copyObject(cs->relation);
		cs->options = split_options(cs->options, &work->set);
		work->skip = cs->if_not_exists &&
			OidIsValid(RangeVarGetRelid(cs->relation, NoLock, true));
	}
	else if (IsA(stmt, CreateTableAsStmt))
	{
		CreateTableAsStmt *ctas = (CreateTableAsStmt *) stmt;

		work->rel = copyObject(ctas->into->rel);
		ctas->into->options = split_options(ctas->into->options, &work->set);
		work->skip = ctas->if_not_exists &&
			OidIsValid(RangeVarGetRelid(ctas->into->rel, NoLock, true));
	}
	else
	{
		AlterTableStmt *as = (AlterTableStmt *) stmt;
		List	   *cmds = NIL;
		bool		heap_relopts = false;
		ListCell   *lc;
		Oid			relid;

		work->rel = copyObject(as->relation);
		work->missing_ok = as->missing_ok;
		foreach(lc, as->cmds)
		{
			AlterTableCmd *cmd = lfirst(lc);

			if (cmd->subtype == AT_SetAccessMethod)
				work->drop_all = strcmp(cmd->name, "fractam") != 0;
			if (is_relopts_cmd(cmd))
			{
				List	   *ours = NIL;

				cmd->def = (Node *) split_options((List *) cmd->def, &ours);
				if (cmd->subtype == AT_ResetRelOptions)
					work->reset = list_concat(work->reset, ours);
				else
					work->set = list_concat(work->set, ours);
				if (cmd->def == NULL)
					continue;	/* only fractam's: nothing left to do */
				heap_relopts = true;
			}
			cmds = lappend(cmds, cmd);
		}
		as->cmds = cmds;
		*run = cmds != NIL;
		if (work->set == NIL && work->reset == NIL)
			work->lockmode = ShareUpdateExclusiveLock;

		/*
		 * heap's SET / RESET would refuse fractam's stored parameters: take
		 * them out until fractam_table_options_apply.  Lock the table first
		 * (at least as strongly as the statement will), as its owner.
		 */
		if (!heap_relopts)
			return work;
		relid = RangeVarGetRelidExtended(as->relation, work->lockmode,
										 as->missing_ok ? RVR_MISSING_OK : 0,
										 RangeVarCallbackOwnsRelation, NULL);
		if (OidIsValid(relid))
		{
			work->saved = stored_options(relid);
			if (work->saved != NIL)
			{
				fractam_reloptions_update(relid, NIL, work->saved);
				CommandCounterIncrement();
			}
		}
	}
	return work;
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

/* Parse fractam's parameters among reloptions (validate: refuse bad values) */
static FractamTableOptions *
parse_options(List *ours, bool validate)
{
	static const relopt_parse_elt tab[] = {
		{"fanout", RELOPT_TYPE_INT, offsetof(FractamTableOptions, fanout)},
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
	Oid			relid;
	Relation	rel;
	bool		is_fractam;
	List	   *ours;

	if (work->skip)
		return;
	relid = RangeVarGetRelidExtended(work->rel, work->lockmode,
									 work->missing_ok ? RVR_MISSING_OK : 0,
									 RangeVarCallbackOwnsRelation, NULL);
	if (!OidIsValid(relid))
		return;
	if (work->set == NIL && work->reset == NIL && work->saved == NIL &&
		!work->drop_all)
		return;
	rel = relation_open(relid, NoLock);
	is_fractam = rel->rd_rel->relkind == RELKIND_RELATION &&
		fractam_is_table(rel);
	relation_close(rel, NoLock);

	if (work->drop_all)
	{
		/* the table is no longer a fractam table: its parameters go */
		ours = stored_options(relid);
		if (ours != NIL)
			fractam_reloptions_update(relid, NIL, ours);
		work->saved = NIL;
		CommandCounterIncrement();
	}

	if (!is_fractam && work->set != NIL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unrecognized parameter \"%s\"",
						((DefElem *) linitial(work->set))->defname),
				 errdetail("\"%s\" is a storage parameter of fractam tables, and \"%s\" is not one.",
						   ((DefElem *) linitial(work->set))->defname,
						   work->rel->relname)));

	/* put back what the statement ran without, then this statement's */
	if (work->saved != NIL)
	{
		fractam_reloptions_update(relid, work->saved, NIL);
		CommandCounterIncrement();
	}
	if (work->set != NIL || work->reset != NIL)
	{
		fractam_reloptions_update(relid, work->set, work->reset);
		CommandCounterIncrement();
	}

	/* every value must be valid (a reset one is gone) */
	ours = stored_options(relid);
	if (ours != NIL)
		(void) parse_options(ours, true);
}

/*
 * fractam's parameters of a table as its tree uses them, defaults for
 * those not set.
 */
void
fractam_table_options_load(Relation rel, FractamTableOptions *opts)
{
	List	   *ours = stored_options(RelationGetRelid(rel));

	opts->fanout = FRACTAM_TABLE_DEFAULT_FANOUT;
	if (ours != NIL)
	{
		FractamTableOptions *parsed = parse_options(ours, false);

		if (parsed)
		{
			opts->fanout = parsed->fanout;
			pfree(parsed);
		}
	}
}
