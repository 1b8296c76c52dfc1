-- LinkBench getLink / multiget (0.53 %): id1 Zipf s=0.8; 3 id2 values from the load's generator
-- (LinkBench draws the list size from a geometric distribution, mean ~1.6; fixed at 3 here).
\set u double(random(1, 1000000000)) / 1000000000.0
\set r int(pow(1.0 + :u * (pow(double(:maxid), 0.2) - 1.0), 5.0))
\set id1 permute(least(:r, :maxid) - 1, :maxid) + 1
\set lt random(1, 2)
\set a ((:id1 + random(1, 12) * 7919) % :maxid) + 1
\set b ((:id1 + random(1, 12) * 7919) % :maxid) + 1
\set c ((:id1 + random(1, 12) * 7919) % :maxid) + 1
SELECT id1, id2, link_type, visibility, data, time, version FROM linktable
 WHERE link_type = :lt AND id1 = :id1 AND id2 IN (:a, :b, :c);
