--
-- fractam_vm_skip: a VACUUM that need not advance relfrozenxid (not
-- aggressive) skips the leaves whose pseudo-blocks are all-visible, as heap
-- skips its all-visible pages: VACUUM of a large append-mostly table (the
-- insert-triggered autovacuum of a timeseries table) reads what changed,
-- not the table.  Having skipped versions that are not frozen, it leaves
-- relfrozenxid where it is (their xids are older than what it read).
-- VACUUM marks the pseudo-blocks it emptied, as heap marks empty pages, so
-- leaves spanning them are skipped too.  DISABLE_PAGE_SKIPPING reads all.
--
\set ECHO none
\i test/regress_helpers.sql
\set ECHO all
CREATE EXTENSION pg_visibility;

CREATE TABLE vs (id int PRIMARY KEY, pad text) USING fractam
  WITH (autovacuum_enabled = off);
INSERT INTO vs SELECT g, repeat('x', 100) FROM generate_series(1, 60000) g;

CREATE FUNCTION vs_blocks() RETURNS bigint LANGUAGE sql AS $$
  SELECT heap_blks_read + heap_blks_hit FROM pg_statio_user_tables
  WHERE relname = 'vs' $$;
CREATE TABLE vs_reads (what text, blocks bigint) WITH (autovacuum_enabled = off);
-- (statistics are flushed when the backend goes idle: a statement first)
CREATE FUNCTION vs_note(what text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_stat_clear_snapshot();
  INSERT INTO vs_reads VALUES (what, vs_blocks());
END $$;
-- blocks read between two notes
CREATE FUNCTION vs_read(a text, b text) RETURNS bigint LANGUAGE sql AS $$
  SELECT y.blocks - x.blocks FROM vs_reads x, vs_reads y
  WHERE x.what = a AND y.what = b $$;

-- the first VACUUM reads everything and marks it all-visible (not frozen:
-- the versions are young); relfrozenxid becomes the inserting xid
SELECT pg_stat_force_next_flush();
SELECT vs_note('start');
VACUUM vs;
SELECT pg_stat_force_next_flush();
SELECT vs_note('first');
SELECT all_visible >= 200 AS many_visible, all_frozen = 0 AS none_frozen
FROM pg_visibility_map_summary('vs');
SELECT relfrozenxid AS frozen1 FROM pg_class WHERE relname = 'vs' \gset

-- new rows at the end: the next VACUUM reads only their leaves, and must
-- not move relfrozenxid to their xid: the skipped versions are older
INSERT INTO vs SELECT g, repeat('y', 100) FROM generate_series(60001, 61000) g;
SELECT pg_stat_force_next_flush();
SELECT vs_note('before second');
VACUUM vs;
SELECT pg_stat_force_next_flush();
SELECT vs_note('second');
SELECT vs_read('before second', 'second') * 20 < vs_read('start', 'first')
  AS reads_under_5_percent;
SELECT relfrozenxid = :'frozen1' AS relfrozenxid_kept,
       reltuples BETWEEN 60000 AND 62000 AS reltuples_estimated
FROM pg_class WHERE relname = 'vs';
SELECT fractam_verify('vs');

-- deletes in the middle: VACUUM reads their leaves (and the open end).
-- (A delete expands its compact version to heap's header in place; leaves
-- of rows deleted one after another run out of room and split, so there
-- are about twice as many of them to read as the rows alone would fill.)
DELETE FROM vs WHERE id BETWEEN 20000 AND 25000;
-- (an older snapshot, such as autovacuum's ANALYZE of another table, would
-- keep the deleted rows)
SELECT ft_wait_for_old_snapshots();
SELECT pg_stat_force_next_flush();
SELECT vs_note('before third');
VACUUM vs;
SELECT pg_stat_force_next_flush();
SELECT vs_note('third');
SELECT vs_read('before third', 'third') * 10 < vs_read('start', 'first') * 3
  AS reads_under_30_percent;
-- the emptied pseudo-blocks are given back for reuse, not marked (a marked
-- one would be passed over, never given back); every block with rows is
SELECT all_visible = (SELECT count(DISTINCT (ctid::text::point)[0]) FROM vs)
  AS blocks_with_rows_marked,
  all_visible < (SELECT max((ctid::text::point)[0])::int + 1 FROM vs)
  AS empty_blocks_not_marked,
  (SELECT rowids_used FROM fractam_table_stats('vs')) <
  (SELECT max((ctid::text::point)[0])::int * 291 - 4000 FROM vs)
  AS empty_blocks_given_back
FROM pg_visibility_map_summary('vs');
SELECT fractam_verify('vs');
SELECT count(*), sum(id) FROM vs;
SELECT ft_check('index', 'SELECT id FROM vs WHERE id BETWEEN 19990 AND 25010');
-- and the next VACUUM skips the leaves around them but the one whose range
-- spans them.  (The pages the
-- third VACUUM deleted were too young to offer to the free space map then;
-- the VACUUM after it reads each of them once to offer it: do that first.)
VACUUM vs;
SELECT pg_stat_force_next_flush();
SELECT vs_note('before fourth');
VACUUM vs;
SELECT pg_stat_force_next_flush();
SELECT vs_note('fourth');
SELECT vs_read('before fourth', 'fourth') * 10 < vs_read('start', 'first')
  AS reads_under_10_percent;

-- DISABLE_PAGE_SKIPPING reads every leaf; an aggressive VACUUM reads every
-- leaf that is not all-frozen (here: all), and advances relfrozenxid past
-- the versions it freezes
SELECT pg_stat_force_next_flush();
SELECT vs_note('before full');
VACUUM (DISABLE_PAGE_SKIPPING) vs;
SELECT pg_stat_force_next_flush();
SELECT vs_note('full');
SELECT vs_read('before full', 'full') >= leaf_pages AS reads_every_leaf
FROM fractam_stats('vs');
SET vacuum_freeze_table_age = 0;
SET vacuum_freeze_min_age = 0;
SELECT pg_stat_force_next_flush();
SELECT vs_note('before aggressive');
VACUUM vs;
SELECT pg_stat_force_next_flush();
SELECT vs_note('aggressive');
RESET vacuum_freeze_table_age;
RESET vacuum_freeze_min_age;
SELECT vs_read('before aggressive', 'aggressive') >= leaf_pages AS reads_every_leaf
FROM fractam_stats('vs');
SELECT relfrozenxid::text::bigint > :'frozen1'::text::bigint AS relfrozenxid_advanced
FROM pg_class WHERE relname = 'vs';
SELECT fractam_verify('vs');

DROP TABLE vs, vs_reads;
DROP FUNCTION vs_blocks, vs_note, vs_read;
DROP EXTENSION pg_visibility;
