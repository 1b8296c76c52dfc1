-- LinkBench deleteNode (1.01 %): id uniform.
\set id random(1, :maxid)
DELETE FROM nodetable WHERE id = :id AND type = 2048;
