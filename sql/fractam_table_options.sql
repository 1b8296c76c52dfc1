--
-- fractam_table_options: storage parameters of fractam tables.  PostgreSQL
-- 15 checks a table's parameters against heap's list; fractam's (fanout)
-- pass through the utility hook into pg_class.reloptions, where pg_dump
-- finds them and ROLLBACK undoes them, beside heap's own.
--
CREATE TABLE o_small (a int) USING fractam WITH (fanout = 4);
CREATE TABLE o_wide (a int) USING fractam WITH (fanout = 64, fillfactor = 90,
                                                autovacuum_enabled = false);
CREATE TABLE o_default (a int) USING fractam;
SELECT relname, reloptions FROM pg_class
WHERE relname IN ('o_small', 'o_wide', 'o_default') ORDER BY relname;

-- the tree uses it: a narrow fanout takes more internal pages
INSERT INTO o_small SELECT generate_series(1, 100000);
INSERT INTO o_wide SELECT generate_series(1, 100000);
INSERT INTO o_default SELECT generate_series(1, 100000);
SELECT s.buffer_pages + s.routing_pages > d.buffer_pages + d.routing_pages AS small_has_more_internal,
       w.buffer_pages + w.routing_pages < d.buffer_pages + d.routing_pages AS wide_has_fewer_internal,
       s.height >= d.height AS small_not_lower
FROM fractam_stats('o_small') s, fractam_stats('o_wide') w, fractam_stats('o_default') d;
SELECT fractam_verify('o_small'), fractam_verify('o_wide');
SELECT count(*), sum(a) FROM o_small;

-- bad values and misplaced parameters: heap's kind of errors
CREATE TABLE o_bad (a int) USING fractam WITH (fanout = 1);
CREATE TABLE o_bad (a int) USING fractam WITH (fanout = 'wide');
CREATE TABLE o_bad (a int) USING heap WITH (fanout = 8);
CREATE TABLE o_bad (a int) PARTITION BY RANGE (a) WITH (fanout = 8);
CREATE TABLE o_bad (a int) USING fractam WITH (fanout_typo = 8);
ALTER TABLE o_small SET (fanout = 65);
SELECT count(*) FROM pg_class WHERE relname = 'o_bad';

-- SET and RESET, alone and beside heap's parameters; ROLLBACK undoes them
BEGIN;
ALTER TABLE o_small SET (fanout = 8);
SELECT reloptions FROM pg_class WHERE relname = 'o_small';
ROLLBACK;
SELECT reloptions FROM pg_class WHERE relname = 'o_small';
ALTER TABLE o_small SET (fillfactor = 70);
ALTER TABLE o_small SET (autovacuum_enabled = false, fanout = 6);
SELECT reloptions FROM pg_class WHERE relname = 'o_small';
ALTER TABLE o_small RESET (fillfactor, fanout);
SELECT reloptions FROM pg_class WHERE relname = 'o_small';
ALTER TABLE o_wide RESET (fanout);
ALTER TABLE o_wide RESET (autovacuum_enabled);
SELECT reloptions FROM pg_class WHERE relname = 'o_wide';
ALTER TABLE IF EXISTS o_missing SET (fanout = 8);
-- a heap parameter that heap refuses still fails, and leaves fanout alone
ALTER TABLE o_small SET (fanout = 12);
ALTER TABLE o_small SET (fillfactor = 5);
SELECT reloptions FROM pg_class WHERE relname = 'o_small';
-- the new fanout applies to what the table grows into
INSERT INTO o_small SELECT generate_series(100001, 140000);
SELECT fractam_verify('o_small');
SELECT count(*), sum(a) FROM o_small;

-- default_table_access_method, as pg_dump restores a table; CREATE TABLE AS
SET default_table_access_method = fractam;
CREATE TABLE o_dumped (a int) WITH (fanout = '8');
CREATE TABLE o_ctas WITH (fanout = 5) AS SELECT a FROM o_small WHERE a <= 1000;
RESET default_table_access_method;
CREATE TABLE o_ctas2 USING fractam WITH (fanout = 5) AS SELECT 1 AS a;
CREATE TABLE o_ctas3 USING heap WITH (fanout = 5) AS SELECT 1 AS a;
CREATE TABLE IF NOT EXISTS o_ctas2 USING fractam WITH (fanout = 9) AS SELECT 2 AS a;
CREATE TABLE IF NOT EXISTS o_dumped (a int) USING fractam WITH (fanout = 9);
SELECT relname, reloptions FROM pg_class
WHERE relname IN ('o_dumped', 'o_ctas', 'o_ctas2', 'o_ctas3') ORDER BY relname;
SELECT count(*) FROM o_ctas;

-- a partition of a fractam-marked partitioned table takes them too
CREATE TABLE o_parted (a int) PARTITION BY RANGE (a) USING fractam;
CREATE TABLE o_part1 PARTITION OF o_parted FOR VALUES FROM (0) TO (100)
  WITH (fanout = 7);
SELECT c.reloptions, a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
WHERE c.relname = 'o_part1';

-- a table that leaves fractam drops them; one that comes back has none
ALTER TABLE o_dumped SET ACCESS METHOD heap;
SELECT reloptions FROM pg_class WHERE relname = 'o_dumped';
ALTER TABLE o_dumped SET (fillfactor = 50);
ALTER TABLE o_dumped SET ACCESS METHOD fractam, SET (fanout = 10);
SELECT reloptions FROM pg_class WHERE relname = 'o_dumped';
ALTER TABLE o_dumped SET ACCESS METHOD heap, SET (fanout = 10);
SELECT reloptions FROM pg_class WHERE relname = 'o_dumped';

-- the table a CREATE makes gets them, whatever else the name finds: a
-- temporary table of the same name, a table in a later search_path schema
CREATE TEMP TABLE o_shadow (a int) USING fractam;
CREATE TABLE public.o_shadow (a int) USING fractam WITH (fanout = 4);
CREATE TABLE o_shadow2 (a int) USING fractam WITH (fanout = 5);
SELECT n.nspname = 'public' AS in_public, c.reloptions
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relname = 'o_shadow' ORDER BY 1;
CREATE SCHEMA o_app;
SET search_path = o_app, public;
CREATE TABLE IF NOT EXISTS o_shadow2 (a int) USING fractam WITH (fanout = 6);
CREATE TABLE IF NOT EXISTS o_shadow2 (a int) USING fractam WITH (fanout = 7);
RESET search_path;
SELECT n.nspname, c.reloptions
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relname = 'o_shadow2' ORDER BY 1;
CREATE TEMP TABLE o_pshadow (a int);
CREATE TABLE public.o_pshadow (a int) PARTITION BY RANGE (a) USING fractam;
SELECT n.nspname = 'public' AS in_public, c.reloptions
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relname = 'o_pshadow' ORDER BY 1;
DROP TABLE o_shadow, public.o_shadow, o_shadow2, o_app.o_shadow2, o_pshadow,
  public.o_pshadow;
DROP SCHEMA o_app;

-- CREATE TABLE AS loads with the new table's fanout
CREATE TABLE o_ctas4 USING fractam WITH (fanout = 4) AS
  SELECT generate_series(1, 100000) AS a;
CREATE TABLE o_ctas16 USING fractam AS SELECT generate_series(1, 100000) AS a;
SELECT s.buffer_pages + s.routing_pages > d.buffer_pages + d.routing_pages
  AS narrow_fanout_used
FROM fractam_stats('o_ctas4') s, fractam_stats('o_ctas16') d;
-- and a rewriting ALTER TABLE with heap's parameters rebuilds with it too
ALTER TABLE o_ctas4 ALTER COLUMN a TYPE bigint, SET (autovacuum_enabled = on);
SELECT reloptions FROM pg_class WHERE relname = 'o_ctas4';
SELECT s.buffer_pages + s.routing_pages > d.buffer_pages + d.routing_pages
  AS narrow_fanout_kept, s.leaf_items
FROM fractam_stats('o_ctas4') s, fractam_stats('o_ctas16') d;
SELECT fractam_verify('o_ctas4');
DROP TABLE o_ctas4, o_ctas16;

-- VACUUM FULL and CLUSTER build a table's tree as its appends grow it: a
-- table never buffers messages, so its level-1 nodes only route (up to 96
-- children each at the default fanout, where a buffering index's build
-- gives them 6), and the file is no larger than heap's for the same rows
CREATE TABLE o_full (id int, t text) USING fractam WITH (autovacuum_enabled = off);
CREATE TABLE o_fullh (id int, t text) USING heap WITH (autovacuum_enabled = off);
COPY o_full FROM PROGRAM 'seq 1 50000 | awk ''{ print $1 "\tabcdefghijklmnopqrstuvwxyz0123456789" }''';
COPY o_fullh FROM PROGRAM 'seq 1 50000 | awk ''{ print $1 "\tabcdefghijklmnopqrstuvwxyz0123456789" }''';
VACUUM FULL o_full;
VACUUM FULL o_fullh;
SELECT pg_relation_size('o_full') <= pg_relation_size('o_fullh') AS not_larger_than_heap,
  buffer_pages * 40 < leaf_pages AS wide_level1, leaf_items
FROM fractam_stats('o_full');
CREATE INDEX o_full_id ON o_full (id DESC);
CLUSTER o_full USING o_full_id;
SELECT pg_relation_size('o_full') <= pg_relation_size('o_fullh') AS not_larger_than_heap,
  buffer_pages * 40 < leaf_pages AS wide_level1, leaf_items
FROM fractam_stats('o_full');
SELECT fractam_verify('o_full');
SELECT min(id), max(id), count(*) FROM o_full WHERE ctid = '(0,1)';
DROP TABLE o_full, o_fullh;

-- subcommands apply in order; RESET takes names only; read-only refuses
ALTER TABLE o_small SET (fanout = 8), RESET (fanout);
SELECT reloptions FROM pg_class WHERE relname = 'o_small';
ALTER TABLE o_small RESET (fanout), SET (fanout = 9);
SELECT reloptions FROM pg_class WHERE relname = 'o_small';
ALTER TABLE o_small RESET (fanout = 3);
BEGIN READ ONLY;
ALTER TABLE o_small SET (fanout = 10);
ROLLBACK;
SELECT reloptions FROM pg_class WHERE relname = 'o_small';

-- ALTER TABLE naming a fractam index sets the index's own fanout
CREATE INDEX o_small_a ON o_small USING fractam (a);
ALTER TABLE o_small_a SET (fanout = 8, buffering = off);
SELECT reloptions FROM pg_class WHERE relname = 'o_small_a';

-- tables that event triggers create are not the statement's: a
-- ddl_command_start trigger's before CREATE TABLE makes its table, a
-- table_rewrite trigger's before ALTER TABLE builds the new file
CREATE FUNCTION o_ddl_start() RETURNS event_trigger LANGUAGE plpgsql AS
$$ BEGIN CREATE TABLE IF NOT EXISTS o_ddl_log AS SELECT 1 AS n; END $$;
CREATE EVENT TRIGGER o_ddl_start ON ddl_command_start WHEN TAG IN ('CREATE TABLE')
  EXECUTE FUNCTION o_ddl_start();
CREATE FUNCTION o_on_rw() RETURNS event_trigger LANGUAGE plpgsql AS
$$ BEGIN CREATE TABLE IF NOT EXISTS o_rw_log USING fractam AS SELECT 1 AS n; END $$;
CREATE EVENT TRIGGER o_on_rw ON table_rewrite EXECUTE FUNCTION o_on_rw();
CREATE TABLE o_ev (a int) USING fractam WITH (fanout = 4);
INSERT INTO o_ev SELECT generate_series(1, 100000);
ALTER TABLE o_ev SET (autovacuum_enabled = off), ALTER a TYPE bigint;
DROP EVENT TRIGGER o_ddl_start;
DROP EVENT TRIGGER o_on_rw;
CREATE TABLE o_ev16 USING fractam AS SELECT generate_series(1, 100000)::bigint AS a;
SELECT relname, reloptions FROM pg_class
WHERE relname IN ('o_ev', 'o_ddl_log', 'o_rw_log') ORDER BY 1;
SELECT s.buffer_pages + s.routing_pages > d.buffer_pages + d.routing_pages
  AS narrow_fanout_kept
FROM fractam_stats('o_ev') s, fractam_stats('o_ev16') d;
SELECT fractam_verify('o_ev');
DROP TABLE o_ev, o_ev16, o_ddl_log, o_rw_log;
DROP FUNCTION o_ddl_start(), o_on_rw();

-- only the owner changes them
CREATE ROLE o_other;
SET ROLE o_other;
ALTER TABLE o_small SET (fanout = 16);
RESET ROLE;
DROP ROLE o_other;
SELECT reloptions FROM pg_class WHERE relname = 'o_small';

DROP TABLE o_small, o_wide, o_default, o_dumped, o_ctas, o_ctas2, o_parted;
