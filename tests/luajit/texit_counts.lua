-- The oracle for LuaJIT recordings: LuaJIT's own count of trace exits that reached its
-- exit handler, from the "texit" VM event, per (flushes so far, trace, exit).
--   luajit texit_counts.lua OUT PROGRAM.lua
-- runs PROGRAM and writes one line per (flushes, trace, exit): "F T E COUNT".
local out, prog = arg[1], arg[2]
local counts, flushes = {}, 0
jit.attach(function(traceno, exitno)
	local key = flushes .. " " .. traceno .. " " .. exitno
	counts[key] = (counts[key] or 0) + 1
end, "texit")
-- LuaJIT keeps one handler per event, and the "trace" one is jitflow's: flushes are
-- counted where the program asks for them (the test programs never fill the code memory,
-- which would flush on its own).
local flush = jit.flush
jit.flush = function(...)
	if select("#", ...) == 0 then flushes = flushes + 1 end
	return flush(...)
end
dofile(prog)
jit.off() -- no trace of this file's own loop below (its exits would not be counted)
local f = assert(io.open(out, "w"))
for key, n in pairs(counts) do f:write(key, " ", n, "\n") end
f:close()
