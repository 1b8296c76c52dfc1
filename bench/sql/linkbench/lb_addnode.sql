-- LinkBench addNode (2.57 %): new node, id from the sequence (set past maxid after the load).
INSERT INTO nodetable (type, version, time, data)
VALUES (2048, 0, extract(epoch from now())::int, substr(decode(repeat(md5(random()::text), 7), 'escape'), 1, 50 + floor(random()*171)::int));
