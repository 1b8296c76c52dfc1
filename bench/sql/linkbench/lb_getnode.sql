-- LinkBench getNode (12.93 %): id Zipf s=0.625 (node read shape).
\set u double(random(1, 1000000000)) / 1000000000.0
\set r int(pow(1.0 + :u * (pow(double(:maxid), 0.375) - 1.0), 2.6667))
\set id permute(least(:r, :maxid) - 1, :maxid) + 1
SELECT id, type, version, time, data FROM nodetable WHERE id = :id AND type = 2048;
