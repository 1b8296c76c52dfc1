--
-- fractam_ddl: unlogged and temporary relations, REINDEX (also CONCURRENTLY),
-- CREATE / DROP INDEX CONCURRENTLY, TRUNCATE (also rolled back, and in the
-- creating transaction), DROP, VACUUM FULL / CLUSTER, ALTER COLUMN TYPE,
-- partitioned tables, DROP EXTENSION.  fractam_verify after every phase.
--
\set ECHO none
\i test/regress_helpers.sql
\set ECHO all

CREATE FUNCTION ddl_data(tbl regclass, lo int, hi int) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format('INSERT INTO %s SELECT i, (i * 7919) %% 10007, md5(i::text) FROM generate_series($1, $2) i', tbl)
	USING lo, hi;
END $$;
CREATE FUNCTION ddl_checks(tbl text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
BEGIN
	RETURN NEXT ft_check('index', format('SELECT id, k FROM %I WHERE k = 5167', tbl));
	RETURN NEXT ft_check('index', format('SELECT id, k FROM %I WHERE k BETWEEN 5000 AND 5100', tbl));
	RETURN NEXT ft_check('index', format('SELECT k FROM %I ORDER BY k DESC LIMIT 100', tbl), true);
	RETURN NEXT ft_check('bitmap', format('SELECT id FROM %I WHERE t < ''1''', tbl));
	RETURN NEXT 'verified ' || ft_verify_all(tbl::regclass);
END $$;

-- unlogged table: the indexes are unlogged too
CREATE UNLOGGED TABLE ul (id int, k int, t text);
CREATE INDEX ul_k ON ul USING fractam (k) WITH (fanout = 4);
CREATE INDEX ul_t ON ul USING fractam (t);
SELECT ddl_data('ul', 1, 6000);
SELECT relname, relpersistence FROM pg_class WHERE relname LIKE 'ul%' ORDER BY 1;
SELECT ddl_checks('ul');
DELETE FROM ul WHERE id % 3 = 0;
VACUUM ul;
SELECT ddl_checks('ul');
-- and back to logged and unlogged again (rewrites the indexes)
ALTER TABLE ul SET LOGGED;
SELECT relname, relpersistence FROM pg_class WHERE relname LIKE 'ul%' ORDER BY 1;
SELECT ddl_checks('ul');
ALTER TABLE ul SET UNLOGGED;
SELECT ddl_data('ul', 6001, 7000);
SELECT ddl_checks('ul');

-- temporary table
CREATE TEMP TABLE tt (id int, k int, t text);
CREATE INDEX tt_k ON tt USING fractam (k) WITH (fanout = 4);
CREATE INDEX tt_t ON tt USING fractam (t);
SELECT ddl_data('tt', 1, 6000);
SELECT ddl_checks('tt');
UPDATE tt SET k = k + 1 WHERE id % 4 = 0;
SELECT ddl_checks('tt');

-- REINDEX in every form; the data must survive each
CREATE TABLE rx (id int, k int, t text);
SELECT ddl_data('rx', 1, 4000);
CREATE INDEX rx_k ON rx USING fractam (k) WITH (fanout = 4);
CREATE INDEX rx_t ON rx USING fractam (t);
SELECT ddl_data('rx', 4001, 8000);
CREATE TEMP TABLE rx_files AS SELECT relname, relfilenode FROM pg_class WHERE relname IN ('rx_k', 'rx_t');
REINDEX INDEX rx_k;
SELECT ddl_checks('rx');
REINDEX TABLE rx;
SELECT ddl_checks('rx');
REINDEX INDEX CONCURRENTLY rx_k;
REINDEX TABLE CONCURRENTLY rx;
SELECT ddl_checks('rx');
SELECT c.relname, c.relfilenode <> f.relfilenode AS new_file
FROM pg_class c JOIN rx_files f USING (relname) ORDER BY 1;
SELECT relname, reloptions FROM pg_class WHERE relname IN ('rx_k', 'rx_t') ORDER BY 1;
-- REINDEX inside a transaction that rolls back keeps the old index working
BEGIN;
REINDEX INDEX rx_k;
SELECT ddl_data('rx', 8001, 8100);
ROLLBACK;
SELECT ddl_checks('rx');
SELECT count(*) FROM rx;

-- CREATE INDEX CONCURRENTLY over existing rows, then more rows
CREATE TABLE cic (id int, k int, t text);
SELECT ddl_data('cic', 1, 6000);
DELETE FROM cic WHERE id % 7 = 0;
CREATE INDEX CONCURRENTLY cic_k ON cic USING fractam (k) WITH (fanout = 4);
CREATE INDEX CONCURRENTLY cic_t ON cic USING fractam (t);
SELECT relname, indisvalid, indisready FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid
WHERE x.indrelid = 'cic'::regclass ORDER BY 1;
SELECT ddl_data('cic', 6001, 7000);
SELECT ddl_checks('cic');
-- a failed CREATE UNIQUE INDEX CONCURRENTLY leaves an invalid index behind
INSERT INTO cic VALUES (-1, 1234, 'dup'), (-2, 1234, 'dup');
CREATE UNIQUE INDEX CONCURRENTLY cic_u ON cic USING fractam (k);
SELECT relname, indisvalid FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid
WHERE c.relname = 'cic_u';
-- the invalid index is not used, and is maintained until dropped
SELECT ft_check('index', 'SELECT id FROM cic WHERE k = 1234');
DROP INDEX CONCURRENTLY cic_u;
DROP INDEX CONCURRENTLY cic_t;
SELECT relname FROM pg_class WHERE relname LIKE 'cic\_%' ORDER BY 1;
-- CONCURRENTLY is refused inside a transaction block
BEGIN;
CREATE INDEX CONCURRENTLY cic_bad ON cic USING fractam (t);
ROLLBACK;

-- TRUNCATE
CREATE TABLE tr (id int, k int, t text);
CREATE INDEX tr_k ON tr USING fractam (k) WITH (fanout = 4);
CREATE INDEX tr_t ON tr USING fractam (t);
SELECT ddl_data('tr', 1, 5000);
TRUNCATE tr;
SELECT leaf_items, buffered_messages FROM fractam_stats('tr_k');
SELECT ddl_checks('tr');
SELECT ddl_data('tr', 1, 5000);
SELECT ddl_checks('tr');
-- a rolled-back TRUNCATE restores the old index contents
BEGIN;
TRUNCATE tr;
SELECT ddl_data('tr', 100001, 100010);
ROLLBACK;
SELECT count(*) FROM tr;
SELECT ddl_checks('tr');
-- TRUNCATE of a table created in the same transaction (truncated in place)
BEGIN;
CREATE TABLE tr2 (id int, k int, t text);
CREATE INDEX tr2_k ON tr2 USING fractam (k) WITH (fanout = 4);
SELECT ddl_data('tr2', 1, 3000);
TRUNCATE tr2;
SELECT ddl_data('tr2', 3001, 5000);
COMMIT;
SELECT ddl_checks('tr2');
SELECT leaf_items + buffered_messages AS entries FROM fractam_stats('tr2_k');

-- DROP INDEX and DROP TABLE, also rolled back
BEGIN;
DROP INDEX tr_k;
ROLLBACK;
SELECT ddl_checks('tr');
BEGIN;
DROP TABLE tr;
ROLLBACK;
SELECT ddl_checks('tr');
DROP INDEX tr_t;
DROP TABLE tr2;
SELECT relname FROM pg_class WHERE relname IN ('tr', 'tr_k', 'tr_t', 'tr2', 'tr2_k') ORDER BY 1;

-- VACUUM FULL and CLUSTER rebuild the index
CREATE INDEX rx_id_bt ON rx USING btree (id);
DELETE FROM rx WHERE id % 2 = 0;
VACUUM FULL rx;
SELECT ddl_checks('rx');
CLUSTER rx USING rx_id_bt;
SELECT ddl_checks('rx');
-- ALTER COLUMN TYPE rebuilds the index with the new type's operator class
ALTER TABLE rx ALTER COLUMN k TYPE bigint;
SELECT o.opcname FROM pg_index x JOIN pg_opclass o ON o.oid = x.indclass[0]
WHERE x.indexrelid = 'rx_k'::regclass;
SELECT ddl_checks('rx');

-- partitioned table: the index cascades to every partition
CREATE TABLE pt (id int, k int, t text) PARTITION BY RANGE (id);
CREATE TABLE pt1 PARTITION OF pt FOR VALUES FROM (0) TO (3000);
CREATE TABLE pt2 PARTITION OF pt FOR VALUES FROM (3000) TO (6000);
CREATE INDEX pt_k ON pt USING fractam (k) WITH (fanout = 4);
CREATE TABLE pt3 (id int, k int, t text);
SELECT ddl_data('pt3', 6000, 8999);
ALTER TABLE pt ATTACH PARTITION pt3 FOR VALUES FROM (6000) TO (9000);
SELECT ddl_data('pt', 1, 5999);
SELECT c.relname, a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
WHERE c.relname LIKE 'pt%k%' ORDER BY 1;
SELECT ft_check('index', 'SELECT id FROM pt WHERE k = 5167');
SELECT ft_check('index', 'SELECT k FROM pt WHERE k < 50 ORDER BY k', true);
SELECT ft_verify_all('pt1') + ft_verify_all('pt2') + ft_verify_all('pt3') AS verified;
DROP TABLE pt;

-- DROP EXTENSION refuses while fractam indexes exist; CASCADE drops them
\set VERBOSITY terse
DROP EXTENSION fractam;
\set VERBOSITY default
BEGIN;
SET LOCAL client_min_messages = warning;
DROP EXTENSION fractam CASCADE;
SELECT count(*) AS fractam_indexes_left FROM pg_class c JOIN pg_am a ON a.oid = c.relam
WHERE a.amname = 'fractam_index';
SELECT relname FROM pg_class WHERE relname IN ('rx', 'cic', 'ul') ORDER BY 1;
ROLLBACK;
SELECT ddl_checks('rx');

DROP TABLE ul, rx, cic;
DROP FUNCTION ddl_data(regclass, int, int);
DROP FUNCTION ddl_checks(text);
