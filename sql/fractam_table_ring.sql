-- Bulk loads and large sequential scans of a fractam table go through a
-- small buffer ring, as heap's do: COPY's leaves through its bulk-insert
-- ring (16 MB), a scan of a table larger than a quarter of shared buffers
-- through a 256 kB one.  Neither may push the rest of shared buffers out,
-- and both must still see every row.  Sized for the harness's default
-- shared_buffers (128MB): the table must exceed a quarter of it.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_buffercache;

-- the table's pages in shared buffers
CREATE FUNCTION ring_buffers(rel regclass) RETURNS bigint
LANGUAGE sql AS $$
	SELECT count(*) FROM pg_buffercache b
	WHERE b.relfilenode = pg_relation_filenode(rel)
	  AND b.reldatabase = (SELECT oid FROM pg_database
						   WHERE datname = current_database())
	  AND b.relforknumber = 0
$$;

CREATE TABLE ring (id bigint, k int, pad text) USING fractam;
-- more than a quarter of shared buffers, and more than the 16 MB ring
COPY ring FROM PROGRAM 'seq 1 300000 | awk ''{ printf "%d,%d,%s\n", $1, ($1 * 7919) % 100003, "abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz" }''' WITH (FORMAT csv);
SELECT pg_relation_size('ring') / 8192 AS pages
\gset
SELECT :pages > (SELECT setting::int / 4 FROM pg_settings
				 WHERE name = 'shared_buffers') AS larger_than_a_quarter,
	   :pages > 2 * 2048 AS larger_than_two_rings;
-- COPY kept about one ring of the table's leaves (2048 buffers), not all
SELECT ring_buffers('ring') < 2048 + 200 AS copy_kept_a_ring,
	   ring_buffers('ring') > 0 AS copy_left_some;
SELECT count(*), sum(id), sum(k), count(DISTINCT pad) FROM ring;
-- the scan went through its own small ring: nothing more stays behind
SELECT ring_buffers('ring') < 2048 + 200 AS scan_kept_a_ring;
SELECT fractam_verify('ring');

-- a table at most a quarter of shared buffers is read normally, and stays
CREATE TABLE small_ring (id bigint, pad text) USING fractam;
INSERT INTO small_ring SELECT g, repeat('x', 100) FROM generate_series(1, 20000) g;
SELECT count(*), sum(id) FROM small_ring;
SELECT ring_buffers('small_ring') >= pg_relation_size('small_ring') / 8192 - 1
	AS small_table_cached;

-- the same rows through every path after the ring load: index scans agree
CREATE INDEX ring_k ON ring USING fractam (k);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*), sum(id) FROM ring WHERE k BETWEEN 1000 AND 2000;
RESET enable_seqscan;
RESET enable_bitmapscan;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
SELECT count(*), sum(id) FROM ring WHERE k BETWEEN 1000 AND 2000;
RESET enable_indexscan;
RESET enable_bitmapscan;

DROP TABLE ring, small_ring;
DROP FUNCTION ring_buffers(regclass);
DROP EXTENSION pg_buffercache;
