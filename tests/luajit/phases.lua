-- Phase changes and calls that see several functions: a loop whose branch flips half-way
-- (its guard's exits climb to hotexit and a side trace takes over), a call site that sees
-- three different functions in turn (callee guards, side traces of side traces), and
-- nested loops (an inner loop trace, the outer loop's trace around it).
local function add(x) return x + 1 end
local function sub(x) return x - 1 end
local function dbl(x) return x * 2 end

local s = 0
for i = 1, 400 do
	if i <= 200 then s = s + i else s = s - 3 end
end

local fs = { add, sub, dbl }
local v = 0
for i = 1, 300 do
	local f = fs[(i % 7 == 0) and 3 or ((i % 3 == 0) and 2 or 1)]
	v = f(v) % 1000
end

local m = 0
for i = 1, 30 do
	for j = 1, 20 do
		if j % 5 == 0 then m = m + i else m = m + 1 end
	end
end
print(s, v, m)

-- A loop LuaJIT cannot compile (it creates a closure: NYI), so its recordings abort (and
-- LuaJIT unwinds through libgcc's unwinder, whose CET instructions the recorder must
-- step over) until LuaJIT stops trying.
local f
for i = 1, 100 do f = function() return i end end
print(f())
