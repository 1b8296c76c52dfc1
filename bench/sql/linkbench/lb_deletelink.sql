-- LinkBench deleteLink (2.99 %), default expunge=false: hide the link (visibility 0) and, if it was
-- visible, decrement its count; one statement (data-modifying CTE).
\set u double(random(1, 1000000000)) / 1000000000.0
\set r int(pow(1.0 + :u * (pow(double(:maxid), 0.259) - 1.0), 3.861))
\set id1 permute(least(:r, :maxid) - 1, :maxid) + 1
\set j random(1, 12)
\set id2 ((:id1 + :j * 7919) % :maxid) + 1
\set lt random(1, 2)
WITH d AS (
  UPDATE linktable SET visibility = 0, time = extract(epoch from now())::bigint, version = version + 1
   WHERE link_type = :lt AND id1 = :id1 AND id2 = :id2 AND visibility = 1
  RETURNING id1)
UPDATE counttable SET count = count - 1, version = version + 1, time = extract(epoch from now())::bigint
 WHERE id = :id1 AND link_type = :lt AND EXISTS (SELECT 1 FROM d);
