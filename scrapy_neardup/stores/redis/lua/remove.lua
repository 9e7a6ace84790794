-- A document out of the store (mark.lua and drop.lua come before this). Returns 1 when the
-- record existed.
-- ARGV: P, doc id, 8-byte member, its window, its bucket entries as check-and-add takes them,
-- the namespace's marker.
assert_mark(ARGV[1], ARGV[6])
return drop(ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])
