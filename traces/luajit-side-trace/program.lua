-- A phase change: the branch flips after 1000 iterations; its exit goes to the
-- interpreter until LuaJIT compiles a side trace for it, which then takes over.
local s = 0
for i = 1, 2000 do
	if i <= 1000 then s = s + i else s = s - 1 end
end
-- A loop LuaJIT cannot compile (it creates a closure: NYI), so its recordings abort
-- until LuaJIT stops trying.
local f
for i = 1, 300 do f = function() return i end end
print(s, f())
