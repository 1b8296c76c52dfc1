-- LinkBench updateNode (7.37 %): id Zipf s=0.606 (node update shape); new payload, version + 1.
\set u double(random(1, 1000000000)) / 1000000000.0
\set r int(pow(1.0 + :u * (pow(double(:maxid), 0.394) - 1.0), 2.5381))
\set id permute(least(:r, :maxid) - 1, :maxid) + 1
UPDATE nodetable SET version = version + 1, time = extract(epoch from now())::int,
       data = substr(decode(repeat(md5(random()::text), 7), 'escape'), 1, 50 + floor(random()*171)::int)
 WHERE id = :id AND type = 2048;
