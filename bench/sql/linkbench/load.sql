-- LinkBench-like load: one transaction loads a chunk of :chunk node ids (LinkBench loader_chunk_size
-- 2048): the nodes (type 2048, data 50..220 bytes), their out-links and the matching counttable rows.
-- Client c loads chunks c, c+nclients, c+2*nclients, ... of 1..maxid.
-- Simplifications (disclosed in bench/README.md): out-degree is geometric with mean 4.74 (LinkBench's
-- real distribution has that mean in the README example) capped at 1000; id2 = ((id1 + j*7919) mod
-- maxid) + 1 for the j-th link; link_type uniform in {1, 2}; payloads are md5 text (compressible).
-- pgbench -D maxid=N -D chunk=2048 -D nclients=C -D n=0
\set n :n + 1
\set a 1 + ((:n - 1) * :nclients + :client_id) * :chunk
\set b least(:a + :chunk, :maxid + 1)
BEGIN;
INSERT INTO nodetable (id, type, version, time, data)
SELECT id, 2048, 0, extract(epoch from now())::int,
       substr(decode(repeat(md5(random()::text), 7), 'escape'), 1, 50 + floor(random()*171)::int + 0*id)
FROM generate_series(:a, :b - 1) AS id;
WITH l AS (
  INSERT INTO linktable (id1, id2, link_type, visibility, data, time, version)
  SELECT i.id1, ((i.id1 + j * 7919) % :maxid) + 1, 1 + floor(random()*2)::int, 1,
         substr(decode(repeat(md5(random()::text), 4), 'escape'), 1, 32 + floor(random()*69)::int + 0*j),
         extract(epoch from now())::bigint, 0
  FROM generate_series(:a, :b - 1) AS i(id1),
       LATERAL (SELECT least(floor(ln(1 - random()) / ln(1 - 0.1742))::int, 1000) + 0*i.id1 AS deg) AS d,
       LATERAL generate_series(1, d.deg) AS j
  ON CONFLICT DO NOTHING
  RETURNING id1, link_type)
INSERT INTO counttable (id, link_type, count, time, version)
SELECT id1, link_type, count(*), extract(epoch from now())::bigint, 0 FROM l GROUP BY id1, link_type;
COMMIT;
