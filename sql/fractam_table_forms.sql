--
-- fractam_table_forms: a fractam table stores a row version in the
-- smallest of three forms that says everything about it (table_format.c):
-- compact (a 10-byte header: what INSERT, COPY and UPDATE write), settled
-- (2 bytes: a version visible to everyone, after VACUUM FULL or CLUSTER,
-- a prune, COPY FREEZE) and full (heap's header: a version that was
-- deleted, updated or locked).  Whatever the form, the rows, their system
-- columns and every change to them match heap's; a change expands the
-- version in place, or splits its leaf when the leaf has no room.
--
\set ECHO none
\i test/regress_helpers.sql
\set ECHO all

CREATE TABLE fm_f (id int, k int, t text, n numeric) USING fractam
  WITH (autovacuum_enabled = off);
CREATE TABLE fm_h (id int, k int, t text, n numeric) USING heap
  WITH (autovacuum_enabled = off);
CREATE INDEX fm_f_id ON fm_f (id);
CREATE INDEX fm_h_id ON fm_h (id);

CREATE FUNCTION fm_rows(t regclass) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
	EXECUTE format('SELECT md5(string_agg(x::text, '','' ORDER BY id)) FROM %s x', t)
	INTO r;
	RETURN r;
END $$;
CREATE FUNCTION fm_same() RETURNS bool LANGUAGE sql AS
  $$ SELECT fm_rows('fm_f') = fm_rows('fm_h') $$;
CREATE FUNCTION fm_forms() RETURNS text LANGUAGE sql AS $$
  SELECT format('full %s, compact %s, settled %s', full_versions,
                compact_versions, settled_versions)
  FROM fractam_table_stats('fm_f') $$;

-- three commands of one transaction: xmin and cmin as heap's
BEGIN;
INSERT INTO fm_f SELECT g, g % 10, CASE WHEN g % 7 = 0 THEN NULL ELSE md5(g::text) END,
  g / 3.0 FROM generate_series(1, 2000) g;
INSERT INTO fm_f (id, k) SELECT g, g % 10 FROM generate_series(2001, 2500) g;
COPY fm_f FROM PROGRAM 'seq 2501 3000 | awk ''{ print $1 "\t" $1 % 10 "\t" "c" $1 "\t\\N" }''';
INSERT INTO fm_h SELECT g, g % 10, CASE WHEN g % 7 = 0 THEN NULL ELSE md5(g::text) END,
  g / 3.0 FROM generate_series(1, 2000) g;
INSERT INTO fm_h (id, k) SELECT g, g % 10 FROM generate_series(2001, 2500) g;
COPY fm_h FROM PROGRAM 'seq 2501 3000 | awk ''{ print $1 "\t" $1 % 10 "\t" "c" $1 "\t\\N" }''';
SELECT cmin::text::int AS cmin, count(*),
  bool_and(xmin::text = txid_current()::text) AS own_xmin,
  bool_and(xmax = '0') AS no_xmax
FROM fm_f GROUP BY 1 ORDER BY 1;
SELECT (SELECT array_agg(cmin::text::int ORDER BY id) FROM fm_f) =
       (SELECT array_agg(cmin::text::int - (SELECT min(cmin::text::int) FROM fm_h)
                         ORDER BY id) FROM fm_h) AS cmin_as_heap;
-- a cursor does not see what later commands insert
DECLARE c1 CURSOR FOR SELECT count(*) FROM fm_f;
INSERT INTO fm_f VALUES (3001, 1, 'later', 1);
FETCH c1;
DELETE FROM fm_f WHERE id = 3001;
SELECT fm_same();
COMMIT;
SELECT fm_forms();
SELECT ctid, id FROM fm_f WHERE id IN (1, 291, 292, 3000) ORDER BY id;
SELECT fractam_verify('fm_f');

-- compact rows take less room than heap's: 13 fewer header bytes, and
-- nearly all of fractam's 8-byte row id back
CREATE TABLE fm_size_f (id bigint, k int, ts timestamptz, v float8, pad text)
  USING fractam WITH (autovacuum_enabled = off);
CREATE TABLE fm_size_h (id bigint, k int, ts timestamptz, v float8, pad text)
  USING heap WITH (autovacuum_enabled = off);
INSERT INTO fm_size_f SELECT g, g % 1000, '2026-01-01', g / 7.0,
  'abcdefghijklmnopqrstuvwxyz0123456789' FROM generate_series(1, 50000) g;
INSERT INTO fm_size_h SELECT * FROM fm_size_f;
SELECT pg_relation_size('fm_size_f') < pg_relation_size('fm_size_h') AS smaller_than_heap,
       pg_relation_size('fm_size_f')::float8 / pg_relation_size('fm_size_h') < 0.98 AS by_2_percent;

-- changes to compact versions: each is expanded first
BEGIN;
UPDATE fm_f SET k = k + 100 WHERE id % 3 = 0;
UPDATE fm_h SET k = k + 100 WHERE id % 3 = 0;
SAVEPOINT s1;
DELETE FROM fm_f WHERE id % 5 = 0;
DELETE FROM fm_h WHERE id % 5 = 0;
ROLLBACK TO s1;
DELETE FROM fm_f WHERE id % 11 = 0;
DELETE FROM fm_h WHERE id % 11 = 0;
SELECT count(*) FROM (SELECT 1 FROM fm_f WHERE id % 13 = 1 FOR KEY SHARE) s;
SELECT fm_same();
COMMIT;
BEGIN;
UPDATE fm_f SET t = 'rolled back' WHERE id % 2 = 0;
ROLLBACK;
SELECT fm_same();
-- shared row locks, then the rows' headers
BEGIN;
SELECT count(*) FROM (SELECT 1 FROM fm_f WHERE id BETWEEN 100 AND 120 FOR SHARE) s;
SELECT ctid, xmax <> '0' AS locked FROM fm_f WHERE id = 101;
COMMIT;
SELECT full_versions > 0 AS some_full, compact_versions > 0 AS some_compact
FROM fractam_table_stats('fm_f');
SELECT fractam_verify('fm_f');

-- VACUUM freezes compact versions in place (the raw xmin stays, as heap's)
VACUUM (FREEZE) fm_f;
VACUUM (FREEZE) fm_h;
SELECT fm_same();
SELECT count(*) FILTER (WHERE xmin::text::bigint > 2) > 0 AS raw_xmins_kept,
  (SELECT age(relfrozenxid) < 100 FROM pg_class WHERE relname = 'fm_f') AS relfrozenxid_advanced
FROM fm_f;
SELECT fractam_verify('fm_f');

-- VACUUM FULL rewrites every version visible to everyone settled (all of
-- them, unless another session's snapshot is older): its xmin reads as
-- FrozenTransactionId (2), its cmin as 0
VACUUM FULL fm_f;
VACUUM FULL fm_h;
SELECT settled_versions > 0 AS settled,
  full_versions + compact_versions + settled_versions = (SELECT count(*) FROM fm_f)
    AS all_counted
FROM fractam_table_stats('fm_f');
SELECT fm_same();
SELECT count(*) FILTER (WHERE xmin::text = '2') =
         (SELECT settled_versions FROM fractam_table_stats('fm_f')) AS settled_read_frozen,
  bool_and(cmin::text = '0') AS cmin_0, bool_and(xmax = '0') AS no_xmax FROM fm_f;
SELECT fractam_verify('fm_f');

-- its leaves are full: changing every version of them expands each, and
-- the leaves that run out of room split (correctly, whatever the order)
BEGIN;
UPDATE fm_f SET n = coalesce(n, 0) + 1 WHERE id % 2 = 1;
UPDATE fm_h SET n = coalesce(n, 0) + 1 WHERE id % 2 = 1;
SELECT count(*) FROM (SELECT 1 FROM fm_f WHERE id % 4 = 0 FOR NO KEY UPDATE) s;
DELETE FROM fm_f WHERE id % 6 = 0;
DELETE FROM fm_h WHERE id % 6 = 0;
SELECT fm_same();
COMMIT;
SELECT fm_same();
SELECT fractam_verify('fm_f');
SET enable_seqscan = off;
SELECT count(*), sum(id) FROM fm_f WHERE id BETWEEN 500 AND 1500;
SELECT count(*), sum(id) FROM fm_h WHERE id BETWEEN 500 AND 1500;
RESET enable_seqscan;

-- a settled row locked twice and updated by one transaction (concurrent
-- lockers and updaters: specs/fractam_forms_locks.spec)
VACUUM FULL fm_f;
BEGIN;
SELECT id FROM fm_f WHERE id = 7 FOR KEY SHARE;
SELECT id FROM fm_f WHERE id = 7 FOR SHARE;
SELECT xmax::text = txid_current()::text AS locked_by_me FROM fm_f WHERE id = 7;
UPDATE fm_f SET k = -7 WHERE id = 7;
SELECT id, k FROM fm_f WHERE id = 7;
ROLLBACK;
SELECT id, k FROM fm_f WHERE id = 7;

-- COPY FREEZE writes settled versions
BEGIN;
CREATE TABLE fm_copy (id int, t text) USING fractam;
COPY fm_copy FROM PROGRAM 'seq 1 1000 | awk ''{ print $1 "\t" "r" $1 }''' WITH (FREEZE);
COMMIT;
SELECT format('full %s, compact %s, settled %s', full_versions, compact_versions,
              settled_versions) FROM fractam_table_stats('fm_copy');
SELECT count(*), bool_and(xmin::text = '2') FROM fm_copy;
UPDATE fm_copy SET t = t || 'u' WHERE id % 10 = 0;
SELECT count(*) FILTER (WHERE t LIKE '%u') FROM fm_copy;
SELECT fractam_verify('fm_copy');

DROP TABLE fm_f, fm_h, fm_size_f, fm_size_h, fm_copy;
DROP FUNCTION fm_same(), fm_rows(regclass), fm_forms();
