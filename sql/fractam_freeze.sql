--
-- fractam_freeze: VACUUM freezes a fractam table's old row versions in place
-- as heap's VACUUM freezes its tuples: xmins before the freeze limit are
-- marked frozen, xmaxes that no longer matter (lockers that ended, single or
-- in a MultiXact; updaters and deleters that aborted) are cleared, and
-- relfrozenxid / relminmxid advance as far as heap's do for the same
-- history.  fractam_verify checks that no version stores an xid older than
-- relfrozenxid or a MultiXact older than relminmxid.  A locker that still
-- runs (a prepared transaction) keeps its lock and holds relfrozenxid back.
-- VACUUM FULL freezes what it rewrites.
--
\set ECHO none
\i test/regress_helpers.sql
\set ECHO all

CREATE TABLE fz_f (id int PRIMARY KEY, v int, pad text) USING fractam
  WITH (autovacuum_enabled = off);
CREATE TABLE fz_h (id int PRIMARY KEY, v int, pad text) USING heap
  WITH (autovacuum_enabled = off);

-- the same history on both tables, one transaction at a time
CREATE PROCEDURE fz_history(t regclass) LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format('INSERT INTO %s SELECT g, 0, repeat(''x'', 20) FROM generate_series(1, 3000) g', t);
	COMMIT;
	EXECUTE format('INSERT INTO %s SELECT g, 0, ''second'' FROM generate_series(3001, 4000) g', t);
	COMMIT;
	-- a lock by a transaction that ends: its xmax stays until frozen
	EXECUTE format('SELECT 1 FROM %s WHERE id BETWEEN 1 AND 100 FOR UPDATE', t);
	COMMIT;
	-- FOR SHARE, then FOR UPDATE in a subtransaction: a MultiXact
	EXECUTE format('SELECT 1 FROM %s WHERE id BETWEEN 101 AND 200 FOR SHARE', t);
	BEGIN
		EXECUTE format('SELECT 1 FROM %s WHERE id BETWEEN 101 AND 200 FOR UPDATE', t);
	EXCEPTION WHEN OTHERS THEN RAISE;
	END;
	COMMIT;
	-- an update and a delete that roll back
	BEGIN
		EXECUTE format('UPDATE %s SET v = 1 WHERE id BETWEEN 201 AND 300', t);
		EXECUTE format('DELETE FROM %s WHERE id BETWEEN 301 AND 400', t);
		RAISE EXCEPTION 'roll back';
	EXCEPTION WHEN raise_exception THEN NULL;
	END;
	COMMIT;
	-- committed updates and deletes (their old versions are dead)
	EXECUTE format('UPDATE %s SET v = 2 WHERE id BETWEEN 401 AND 500', t);
	EXECUTE format('DELETE FROM %s WHERE id BETWEEN 501 AND 600', t);
	COMMIT;
END $$;
CALL fz_history('fz_f');
CALL fz_history('fz_h');

-- a plain VACUUM keeps young xids (freeze_min_age): nothing moves past them
-- (versions a full leaf settled while it pruned store no xid: their xmin
-- reads as FrozenTransactionId, 2)
VACUUM fz_f;
SELECT fractam_verify('fz_f');
SELECT c.relfrozenxid::text::bigint <=
  (SELECT min(xmin::text::bigint) FROM fz_f WHERE xmin::text::bigint > 2)
  AS frozenxid_not_past_stored
FROM pg_class c WHERE c.relname = 'fz_f';

-- VACUUM FREEZE: both tables' horizons advance as far
VACUUM (FREEZE) fz_f, fz_h;
SELECT f.relfrozenxid = h.relfrozenxid AS same_relfrozenxid,
       f.relminmxid = h.relminmxid AS same_relminmxid,
       age(f.relfrozenxid) <= age(h.relfrozenxid) AS young
FROM pg_class f, pg_class h WHERE f.relname = 'fz_f' AND h.relname = 'fz_h';
SELECT fractam_verify('fz_f');

-- the frozen table answers as before, and its rows take new locks and changes
SELECT count(*), sum(v), count(*) FILTER (WHERE pad = 'second') FROM fz_f;
SELECT count(*), sum(v), count(*) FILTER (WHERE pad = 'second') FROM fz_h;
SELECT (SELECT array_agg(id ORDER BY id) FROM fz_f WHERE id % 97 = 0) =
       (SELECT array_agg(id ORDER BY id) FROM fz_h WHERE id % 97 = 0) AS same_rows;
BEGIN;
SELECT count(*) FROM (SELECT id FROM fz_f WHERE id BETWEEN 1 AND 200 FOR UPDATE NOWAIT) s;
UPDATE fz_f SET v = 3 WHERE id BETWEEN 150 AND 250;
DELETE FROM fz_f WHERE id BETWEEN 290 AND 310;
COMMIT;
SELECT count(*), sum(v) FROM fz_f;
SELECT count(*) FROM fz_f WHERE id BETWEEN 150 AND 250 AND v = 3;

-- a lock held by a prepared transaction is still running: VACUUM FREEZE
-- keeps it, and relfrozenxid stays at or before the locker
BEGIN;
SELECT count(*) FROM (SELECT id FROM fz_f WHERE id BETWEEN 1000 AND 1010 FOR SHARE) s;
SELECT txid_current() AS locker \gset
PREPARE TRANSACTION 'fz_locker';
VACUUM (FREEZE) fz_f;
SELECT relfrozenxid::text::bigint <= :locker % 4294967296 AS held_back
FROM pg_class WHERE relname = 'fz_f';
SELECT fractam_verify('fz_f');
-- the lock is still there: another FOR UPDATE cannot take it
BEGIN;
SELECT count(*) FROM (SELECT id FROM fz_f WHERE id = 1005 FOR UPDATE NOWAIT) s;
ROLLBACK;
COMMIT PREPARED 'fz_locker';
VACUUM (FREEZE) fz_f;
SELECT relfrozenxid::text::bigint > :locker % 4294967296 AS passed_locker
FROM pg_class WHERE relname = 'fz_f';
SELECT fractam_verify('fz_f');
SELECT count(*) FROM (SELECT id FROM fz_f WHERE id = 1005 FOR UPDATE NOWAIT) s;

-- the indexes still find every row
SELECT ft_check('index', 'SELECT id, v FROM fz_f WHERE id BETWEEN 100 AND 700');

-- a MultiXact of a key-share locker and an update that aborted goes once its
-- members have ended, however young the MultiXact: with
-- vacuum_freeze_min_age = 0 (and the default MultiXact age) relfrozenxid
-- passes both members' xids, as heap's does
CREATE TABLE fz_m (id int PRIMARY KEY, v int) USING fractam
  WITH (autovacuum_enabled = off);
CREATE TABLE fz_mh (id int PRIMARY KEY, v int) USING heap
  WITH (autovacuum_enabled = off);
INSERT INTO fz_m SELECT g, 0 FROM generate_series(1, 10) g;
INSERT INTO fz_mh SELECT g, 0 FROM generate_series(1, 10) g;
BEGIN;
SELECT txid_current() AS locker \gset
SELECT count(*) FROM (SELECT id FROM fz_m WHERE id <= 5 FOR KEY SHARE) s;
SELECT count(*) FROM (SELECT id FROM fz_mh WHERE id <= 5 FOR KEY SHARE) s;
SAVEPOINT a;
UPDATE fz_m SET v = 1 WHERE id <= 5;
UPDATE fz_mh SET v = 1 WHERE id <= 5;
ROLLBACK TO a;
COMMIT;
SET vacuum_freeze_min_age = 0;
VACUUM fz_m, fz_mh;
RESET vacuum_freeze_min_age;
SELECT f.relfrozenxid = h.relfrozenxid AS same_relfrozenxid,
       f.relfrozenxid::text::bigint > :locker % 4294967296 + 1 AS passed_members
FROM pg_class f, pg_class h WHERE f.relname = 'fz_m' AND h.relname = 'fz_mh';
SELECT fractam_verify('fz_m');
SELECT count(*), sum(v) FROM fz_m;
SELECT count(*) FROM (SELECT id FROM fz_m FOR UPDATE NOWAIT) s;
DROP TABLE fz_m, fz_mh;

-- VACUUM FULL freezes what it rewrites, as heap's does: relfrozenxid moves
-- past every xmin the table shows (each rewrite takes an xid of its own, so
-- the two tables' values differ by one)
TRUNCATE fz_f, fz_h;
CALL fz_history('fz_f');
CALL fz_history('fz_h');
VACUUM FULL fz_f, fz_h;
SELECT (SELECT relfrozenxid::text::bigint FROM pg_class WHERE relname = 'fz_f') >
       (SELECT max(xmin::text::bigint) FROM fz_f) AS fractam_past_every_xmin,
       (SELECT relfrozenxid::text::bigint FROM pg_class WHERE relname = 'fz_h') >
       (SELECT max(xmin::text::bigint) FROM fz_h) AS heap_past_every_xmin;
SELECT fractam_verify('fz_f');
SELECT count(*), sum(v) FROM fz_f;
SELECT count(*), sum(v) FROM fz_h;
SELECT ft_check('index', 'SELECT id, v FROM fz_f WHERE id BETWEEN 100 AND 700');

DROP TABLE fz_f, fz_h;
DROP PROCEDURE fz_history;
