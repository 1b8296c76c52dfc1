-- LinkBench addLink (8.99 %): id1 Zipf s=0.741 (write shape); id2 from the load's generator so that
-- some adds hit existing links. Upsert + counttable upsert in one transaction (LinkStorePgsql uses
-- INSERT ... ON CONFLICT). Simplification: the count is incremented even when the link existed.
\set u double(random(1, 1000000000)) / 1000000000.0
\set r int(pow(1.0 + :u * (pow(double(:maxid), 0.259) - 1.0), 3.861))
\set id1 permute(least(:r, :maxid) - 1, :maxid) + 1
\set j random(1, 12)
\set id2 ((:id1 + :j * 7919) % :maxid) + 1
\set lt random(1, 2)
BEGIN;
INSERT INTO linktable (id1, id2, link_type, visibility, data, time, version)
VALUES (:id1, :id2, :lt, 1, substr(decode(repeat(md5(random()::text), 4), 'escape'), 1, 32 + floor(random()*69)::int),
        extract(epoch from now())::bigint, 0)
ON CONFLICT (link_type, id1, id2) DO UPDATE SET visibility = EXCLUDED.visibility, data = EXCLUDED.data, time = EXCLUDED.time;
INSERT INTO counttable (id, link_type, count, time, version) VALUES (:id1, :lt, 1, extract(epoch from now())::bigint, 0)
ON CONFLICT (id, link_type) DO UPDATE SET count = counttable.count + 1, version = counttable.version + 1, time = EXCLUDED.time;
COMMIT;
