-- LinkBench getLinkList (50.71 %): id1 Zipf s=0.8 (read shape), scattered with permute().
-- LinkStorePgsql: WHERE id1=? AND link_type=? AND time>=? AND time<=? AND visibility=1
-- ORDER BY time DESC LIMIT ? OFFSET ? (rangeLimit 10000; the 30 % "history" paging is not emulated).
\set u double(random(1, 1000000000)) / 1000000000.0
\set r int(pow(1.0 + :u * (pow(double(:maxid), 0.2) - 1.0), 5.0))
\set id1 permute(least(:r, :maxid) - 1, :maxid) + 1
\set lt random(1, 2)
SELECT id1, id2, link_type, visibility, data, time, version FROM linktable
 WHERE id1 = :id1 AND link_type = :lt AND time >= 0 AND time <= 9999999999 AND visibility = 1
 ORDER BY time DESC LIMIT 10000 OFFSET 0;
