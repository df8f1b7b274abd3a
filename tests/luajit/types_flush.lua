-- Tables whose value types change (number, then string, then boolean: type guards fail
-- and side traces specialise), then jit.flush(): every trace is thrown away and the
-- machine code memory is reused by the traces compiled after it, under the same numbers.
local t = {}
for i = 1, 120 do
	if i <= 60 then t[i] = i elseif i <= 90 then t[i] = tostring(i) else t[i] = (i % 2 == 0) end
end

local function count(tab)
	local n, str, b = 0, 0, 0
	for i = 1, #tab do
		local x = tab[i]
		if type(x) == "number" then n = n + x
		elseif type(x) == "string" then str = str + #x
		else b = b + (x and 1 or 0) end
	end
	return n, str, b
end

local a1, a2, a3 = 0, 0, 0
for _ = 1, 3 do
	local n, str, b = count(t)
	a1, a2, a3 = a1 + n, a2 + str, a3 + b
end
jit.flush()
for _ = 1, 3 do
	local n, str, b = count(t)
	a1, a2, a3 = a1 + n, a2 + str, a3 + b
end
print(a1, a2, a3)
