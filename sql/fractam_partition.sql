-- Partitioned tables that pass fractam on to the partitions created later
-- (PostgreSQL 15 itself refuses USING on a partitioned table and gives new
-- partitions default_table_access_method).
SET default_table_access_method = heap;

CREATE TABLE events (id int, day date, payload text)
  PARTITION BY RANGE (day) USING fractam;
SELECT reloptions FROM pg_class WHERE relname = 'events';

-- PARTITION OF without USING: fractam; with USING heap: heap
CREATE TABLE events_d1 PARTITION OF events
  FOR VALUES FROM ('2026-01-01') TO ('2026-01-02');
CREATE TABLE events_d2 PARTITION OF events
  FOR VALUES FROM ('2026-01-02') TO ('2026-01-03') USING heap;
-- a sub-partitioned partition is marked in turn; its partitions follow
CREATE TABLE events_d3 PARTITION OF events
  FOR VALUES FROM ('2026-01-03') TO ('2026-01-04') PARTITION BY LIST (id);
CREATE TABLE events_d3_1 PARTITION OF events_d3 FOR VALUES IN (1);
CREATE TABLE events_d3_rest PARTITION OF events_d3 DEFAULT;

SELECT c.relname, c.relkind, a.amname, c.reloptions
FROM pg_class c LEFT JOIN pg_am a ON a.oid = c.relam
WHERE c.relname LIKE 'events%' ORDER BY c.relname;

INSERT INTO events
SELECT g, date '2026-01-01' + (g % 3), 'p' || g FROM generate_series(1, 300) g;
SELECT tableoid::regclass AS part, count(*) FROM events GROUP BY 1 ORDER BY 1;
UPDATE events SET day = '2026-01-02' WHERE id = 3;		-- moves to heap
SELECT tableoid::regclass, * FROM events WHERE id = 3;
SELECT fractam_verify('events_d1');

-- SET ACCESS METHOD on the partitioned table changes later partitions only,
-- and ROLLBACK undoes it
BEGIN;
ALTER TABLE events SET ACCESS METHOD heap;
SELECT reloptions FROM pg_class WHERE relname = 'events';
CREATE TABLE events_d4 PARTITION OF events
  FOR VALUES FROM ('2026-01-04') TO ('2026-01-05');
SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
WHERE c.relname = 'events_d4';
ROLLBACK;
SELECT reloptions FROM pg_class WHERE relname = 'events';
ALTER TABLE events SET ACCESS METHOD heap;
ALTER TABLE events SET ACCESS METHOD fractam;
SELECT reloptions FROM pg_class WHERE relname = 'events';
ALTER TABLE events SET ACCESS METHOD brin;	-- not a table access method
-- on a leaf partition, SET ACCESS METHOD rewrites it as PostgreSQL does
ALTER TABLE events_d2 SET ACCESS METHOD fractam;
SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
WHERE c.relname = 'events_d2';
SELECT count(*) FROM events;

-- the mark as pg_dump writes it is accepted again (a restore)
CREATE TABLE restored (id int) PARTITION BY LIST (id)
  WITH (fractam_partitions = 'true');
CREATE TABLE restored_1 PARTITION OF restored FOR VALUES IN (1);
SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
WHERE c.relname = 'restored_1';
-- other storage parameters stay PostgreSQL's to refuse
CREATE TABLE refused (id int) PARTITION BY LIST (id) WITH (fillfactor = 50);
-- a partitioned table created in a rolled-back transaction leaves nothing
BEGIN;
CREATE TABLE gone (id int) PARTITION BY LIST (id) USING fractam;
ROLLBACK;
SELECT count(*) FROM pg_class WHERE relname = 'gone';
-- CREATE TABLE IF NOT EXISTS leaves an existing table's mark alone
CREATE TABLE IF NOT EXISTS restored (id int) PARTITION BY LIST (id)
  WITH (fractam_partitions = 'false');
SELECT reloptions FROM pg_class WHERE relname = 'restored';

DROP TABLE events, restored;
RESET default_table_access_method;
