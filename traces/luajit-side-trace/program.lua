-- A phase change: the branch flips after 1000 iterations; its exit goes to the
-- interpreter until LuaJIT compiles a side trace for it, which then takes over.
local s = 0
for i = 1, 2000 do
	if i <= 1000 then s = s + i else s = s - 1 end
end
print(s)
