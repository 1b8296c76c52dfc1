-- LinkBench updateLink (8.01 %): same key choice as addLink; upsert that bumps version, count unchanged.
\set u double(random(1, 1000000000)) / 1000000000.0
\set r int(pow(1.0 + :u * (pow(double(:maxid), 0.259) - 1.0), 3.861))
\set id1 permute(least(:r, :maxid) - 1, :maxid) + 1
\set j random(1, 12)
\set id2 ((:id1 + :j * 7919) % :maxid) + 1
\set lt random(1, 2)
INSERT INTO linktable (id1, id2, link_type, visibility, data, time, version)
VALUES (:id1, :id2, :lt, 1, substr(decode(repeat(md5(random()::text), 4), 'escape'), 1, 32 + floor(random()*69)::int),
        extract(epoch from now())::bigint, 0)
ON CONFLICT (link_type, id1, id2) DO UPDATE
  SET visibility = EXCLUDED.visibility, data = EXCLUDED.data, time = EXCLUDED.time, version = linktable.version + 1;
