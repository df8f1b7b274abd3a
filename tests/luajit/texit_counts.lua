-- The oracle for LuaJIT recordings: what LuaJIT itself reports through its VM events.
--   luajit texit_counts.lua OUT PROGRAM.lua
-- runs PROGRAM and writes to OUT:
--   "F T E COUNT AFTER"    exits of trace T through exit E that reached LuaJIT's exit
--                          handler ("texit" events), F = flushes before the trace; AFTER
--                          of them came after a side trace for that exit was compiled;
--   "trace F T P E LINK L" every trace compiled ("trace" event "stop"): its parent trace
--                          P and exit E (0 0 for a root trace, from its "start" event)
--                          and jit.util.traceinfo's linktype and link;
--   "event WHAT COUNT"     "trace" events by kind: start, stop, abort, flush;
--   "loop F T INDEX"       for a root trace of a numeric for loop: the loop's own
--                          variable (its "(for index)") when LuaJIT stopped recording
--                          it, i.e. the iteration LuaJIT ran in the interpreter last.
local out, prog = arg[1], arg[2]
local jutil = require("jit.util")
local counts, after, flushes, events, traces = {}, {}, 0, {}, {}
local started, side_of, loops = {}, {}, {}
-- The innermost numeric for loop's variable in the running frame of func, or nil: read
-- from the program's own stack (debug.getlocal), not from anything jitflow writes.
local function for_index(func)
	for level = 2, 64 do
		local info = debug.getinfo(level, "f")
		if not info then return nil end
		if info.func == func then
			local index
			for k = 1, 255 do
				local name, value = debug.getlocal(level, k)
				if not name then break end
				if name == "(for index)" then index = value end
			end
			return index
		end
	end
end
jit.attach(function(traceno, exitno)
	local key = flushes .. " " .. traceno .. " " .. exitno
	counts[key] = (counts[key] or 0) + 1
	if side_of[key] then after[key] = (after[key] or 0) + 1 end
end, "texit")
-- LuaJIT keeps one handler per event, and when jitflow's module is loaded the "trace"
-- one is its: this one counts, then hands the event on.
local jitflow = package.loaded.jitflow
jit.attach(function(what, traceno, func, pc, parent, exitno)
	events[what] = (events[what] or 0) + 1
	if what == "start" then
		started[traceno] = { parent or 0, exitno or 0 }
	elseif what == "stop" then
		local info = jutil.traceinfo(traceno)
		local s = started[traceno] or { 0, 0 }
		traces[#traces + 1] = string.format("trace %d %d %d %d %s %d", flushes, traceno,
			s[1], s[2], info.linktype, info.link or 0)
		if s[1] ~= 0 then side_of[flushes .. " " .. s[1] .. " " .. s[2]] = traceno end
		local index = s[1] == 0 and info.linktype == "loop" and for_index(func)
		if index then
			loops[#loops + 1] = string.format("loop %d %d %d", flushes, traceno, index)
		end
	elseif what == "flush" then
		flushes = flushes + 1
		side_of = {}
	end
	if jitflow and jitflow.on_trace then
		return jitflow.on_trace(what, traceno, func, pc, parent, exitno)
	end
end, "trace")
dofile(prog)
jit.off() -- no trace of this file's own loop below (its exits would not be counted)
-- in a stable order, so that the file can be kept beside a recording
local function numeric(a, b)
	local x, y = {}, {}
	for n in a:gmatch("%d+") do x[#x + 1] = tonumber(n) end
	for n in b:gmatch("%d+") do y[#y + 1] = tonumber(n) end
	for i = 1, math.min(#x, #y) do
		if x[i] ~= y[i] then return x[i] < y[i] end
	end
	return #x < #y
end
local lines, names = {}, {}
for key, n in pairs(counts) do lines[#lines + 1] = key .. " " .. n .. " " .. (after[key] or 0) end
table.sort(lines, numeric)
for what in pairs(events) do names[#names + 1] = what end
table.sort(names)
local f = assert(io.open(out, "w"))
for _, line in ipairs(lines) do f:write(line, "\n") end
for _, line in ipairs(traces) do f:write(line, "\n") end
for _, line in ipairs(loops) do f:write(line, "\n") end
for _, what in ipairs(names) do f:write("event ", what, " ", events[what], "\n") end
f:close()
