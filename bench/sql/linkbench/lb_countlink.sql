-- LinkBench countLink (4.89 %): id1 Zipf s=0.8 (read shape).
\set u double(random(1, 1000000000)) / 1000000000.0
\set r int(pow(1.0 + :u * (pow(double(:maxid), 0.2) - 1.0), 5.0))
\set id1 permute(least(:r, :maxid) - 1, :maxid) + 1
\set lt random(1, 2)
SELECT count FROM counttable WHERE id = :id1 AND link_type = :lt;
