-- Row ids of pseudo-blocks that VACUUM emptied are given back and reused,
-- so a queue (insert at one end, delete at the other) keeps its TID blocks
-- and row ids bounded.  Rows and index answers are compared with a heap
-- table that takes the same statements.
\set ECHO none
\i test/regress_helpers.sql
\set ECHO all
CREATE TABLE rq (id bigint, v text) USING fractam;
CREATE INDEX rq_id ON rq (id);
CREATE INDEX rq_v ON rq USING fractam (v);
CREATE TABLE rq_heap (id bigint, v text) USING heap;
ALTER TABLE rq SET (autovacuum_enabled = off);

CREATE FUNCTION rq_same() RETURNS TABLE (fractam_rows bigint, differ bigint)
LANGUAGE sql AS $$
  SELECT (SELECT count(*) FROM rq),
         (SELECT count(*) FROM ((TABLE rq EXCEPT ALL TABLE rq_heap)
                                UNION ALL
                                (TABLE rq_heap EXCEPT ALL TABLE rq)) d)
$$;

INSERT INTO rq SELECT g, 'v' || g FROM generate_series(1, 3000) g;
INSERT INTO rq_heap SELECT g, 'v' || g FROM generate_series(1, 3000) g;
SELECT rowids_used, max(ctid) AS last FROM fractam_table_stats('rq'), rq
GROUP BY 1;

-- the oldest 2000 rows go: pseudo-blocks 0 to 5 hold nothing after VACUUM
-- (block 6 holds rows 2001 to 2037 too)
DELETE FROM rq WHERE id <= 2000;
DELETE FROM rq_heap WHERE id <= 2000;
VACUUM rq;
SELECT rowids_used FROM fractam_table_stats('rq');
SELECT fractam_verify('rq');

-- new rows take the row ids given back, from (0,1) on
SELECT ft_wait_for_old_snapshots();
INSERT INTO rq SELECT g, 'v' || g FROM generate_series(3001, 3600) g;
INSERT INTO rq_heap SELECT g, 'v' || g FROM generate_series(3001, 3600) g;
SELECT min(ctid), max(ctid), count(*) FROM rq WHERE id > 3000;
SELECT rowids_used FROM fractam_table_stats('rq');
SELECT * FROM rq_same();
SELECT fractam_verify('rq');

-- every scan kind agrees
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*), sum(id) FROM rq WHERE id > 0;
SELECT count(*) FROM rq WHERE v > 'v';
SET enable_indexscan = off;
SET enable_bitmapscan = on;
SELECT count(*), sum(id) FROM rq WHERE id > 0;
RESET enable_seqscan;
RESET enable_indexscan;
RESET enable_bitmapscan;
SELECT count(*), sum(id), count(DISTINCT ctid) FROM rq;
SELECT id FROM rq WHERE ctid = '(1,5)';
SELECT count(*) FROM rq WHERE ctid < '(3,1)';

-- a queue: each round appends 700 rows (COPY's batches and single-row
-- INSERTs) and removes the oldest 700; the row ids in use and the TID
-- blocks stay bounded
CREATE FUNCTION rq_round(r int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  base bigint := 4000 + r * 1000;
BEGIN
  INSERT INTO rq SELECT g, 'q' || g FROM generate_series(base, base + 599) g;
  INSERT INTO rq_heap SELECT g, 'q' || g FROM generate_series(base, base + 599) g;
  FOR i IN 600..699 LOOP
    INSERT INTO rq VALUES (base + i, 'q' || (base + i));
    INSERT INTO rq_heap VALUES (base + i, 'q' || (base + i));
  END LOOP;
  DELETE FROM rq WHERE id IN (SELECT id FROM rq ORDER BY id LIMIT 700);
  DELETE FROM rq_heap WHERE id IN (SELECT id FROM rq_heap ORDER BY id LIMIT 700);
END $$;
SELECT rq_round(r) FROM generate_series(1, 3) r;
VACUUM rq;
SELECT ft_wait_for_old_snapshots();
SELECT rq_round(r) FROM generate_series(4, 6) r;
VACUUM rq;
SELECT ft_wait_for_old_snapshots();
SELECT rq_round(r) FROM generate_series(7, 9) r;
VACUUM rq;
SELECT ft_wait_for_old_snapshots();
SELECT rq_round(r) FROM generate_series(10, 12) r;
VACUUM rq;
-- 1600 rows live; without reuse the row ids would have passed 11,000
SELECT count(*), rowids_used < 4000 AS bounded,
       max(ctid) < '(20,1)' AS tid_blocks_bounded
FROM rq, fractam_table_stats('rq') GROUP BY rowids_used;
SELECT * FROM rq_same();
SELECT fractam_verify('rq');
SET enable_seqscan = off;
SELECT count(*), sum(id) FROM rq WHERE id > 0;
RESET enable_seqscan;
-- COPY into reused row ids (its batches store each range before the next)
COPY (SELECT g, 'c' || g FROM generate_series(100000, 102999) g) TO '/tmp/fractam_rowid_reuse.copy';
DELETE FROM rq WHERE id < 100000;
DELETE FROM rq_heap WHERE id < 100000;
VACUUM rq;
SELECT ft_wait_for_old_snapshots();
COPY rq FROM '/tmp/fractam_rowid_reuse.copy';
COPY rq_heap FROM '/tmp/fractam_rowid_reuse.copy';
SELECT min(ctid) < '(2,1)' AS reused, count(*), count(DISTINCT ctid) FROM rq;
SELECT * FROM rq_same();
SELECT fractam_verify('rq');

-- an emptied table gives back all but the pseudo-block this session holds
DELETE FROM rq;
VACUUM rq;
SELECT rowids_used <= 291 AS only_the_held_block FROM fractam_table_stats('rq');
SELECT fractam_verify('rq');

-- VACUUM FULL and TRUNCATE start a new file: nothing is given back there
INSERT INTO rq SELECT g, 'w' || g FROM generate_series(1, 1000) g;
VACUUM FULL rq;
SELECT rowids_used, min(ctid), max(ctid) FROM rq, fractam_table_stats('rq')
GROUP BY 1;
TRUNCATE rq;
SELECT rowids_used FROM fractam_table_stats('rq');

-- a temporary table reuses its row ids as well
CREATE TEMP TABLE rq_temp (id int) USING fractam;
INSERT INTO rq_temp SELECT generate_series(1, 2000);
DELETE FROM rq_temp WHERE id <= 1500;
VACUUM rq_temp;
SELECT ft_wait_for_old_snapshots();
INSERT INTO rq_temp SELECT generate_series(2001, 2500);
SELECT min(ctid), count(*), count(DISTINCT ctid) FROM rq_temp;
SELECT fractam_verify('rq_temp');

DROP TABLE rq, rq_heap, rq_temp;
DROP FUNCTION rq_round(int);
DROP FUNCTION rq_same();
