-- One document: ARGV as check.lua lists them (mark.lua, live.lua and check.lua come before this).
return check(ARGV, true)
