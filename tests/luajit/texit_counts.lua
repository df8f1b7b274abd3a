-- The oracle for LuaJIT recordings: what LuaJIT itself reports through its VM events.
--   luajit texit_counts.lua OUT PROGRAM.lua [require-jitflow | jv=FILE]
-- runs PROGRAM and writes to OUT what LuaJIT's "trace" and "texit" events said. Its
-- "trace" handler is the program's own, attached as any program attaches one: after
-- jitflow's module loaded (under `jitflow record`, which loads it first), or before it
-- with require-jitflow (this file then loads the module itself). With jv=FILE (luajit
-- -jv=FILE), it attaches no "trace" handler and reads the trace events from what -jv's
-- handler writes to FILE instead, in step with the "texit" events. OUT has:
--   "F T E COUNT AFTER"    exits of trace T through exit E that reached LuaJIT's exit
--                          handler ("texit" events), F = flushes before the trace; AFTER
--                          of them came after a side trace for that exit was compiled;
--   "trace F T P E LINK L" every trace compiled ("trace" event "stop"): its parent trace
--                          P and exit E (0 0 for a root trace, from its "start" event)
--                          and jit.util.traceinfo's linktype and link;
--   "event WHAT COUNT"     "trace" events by kind: start, stop, abort, flush;
--   "loop F T INDEX"       for a root trace of a numeric for loop: the loop's own
--                          variable (its "(for index)") when LuaJIT stopped recording
--                          it, i.e. the iteration LuaJIT ran in the interpreter last
--                          (not with jv=FILE: -jv does not say).
local out, prog, mode = arg[1], arg[2], arg[3]
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
-- One "trace" event, as the "trace" handler gets it (func only from a handler) or as -jv
-- wrote it (the link type and linked trace of a "stop" then come from its line).
local function trace_event(what, traceno, func, parent, exitno, linktype, link)
	events[what] = (events[what] or 0) + 1
	if what == "start" then
		started[traceno] = { parent or 0, exitno or 0 }
	elseif what == "stop" then
		if not linktype then
			local info = jutil.traceinfo(traceno)
			linktype, link = info.linktype, info.link
		end
		local s = started[traceno] or { 0, 0 }
		traces[#traces + 1] = string.format("trace %d %d %d %d %s %d", flushes, traceno,
			s[1], s[2], linktype, link or 0)
		if s[1] ~= 0 then side_of[flushes .. " " .. s[1] .. " " .. s[2]] = traceno end
		local index = func and s[1] == 0 and linktype == "loop" and for_index(func)
		if index then
			loops[#loops + 1] = string.format("loop %d %d %d", flushes, traceno, index)
		end
	elseif what == "flush" then
		flushes = flushes + 1
		side_of = {}
	end
end

-- -jv's lines (jit/v.lua): "[TRACE n (parent/exit) where link]" for a stop, "[TRACE ---
-- ...]" for an abort, "[TRACE flush]"; -jv writes none for a start, which each stop and
-- abort had.
local unknown_jv_line -- the first line of -jv's not understood (the run then fails)
local function jv_line(line)
	if line == "[TRACE flush]" then return trace_event("flush") end
	if line:match("^%[TRACE %-%-%- ") then
		trace_event("start", 0)
		return trace_event("abort", 0)
	end
	local traceno, rest = line:match("^%[TRACE +(%d+) (.*)%]$")
	if not traceno then
		unknown_jv_line = unknown_jv_line or line
		return
	end
	traceno = tonumber(traceno)
	local parent, exitno = rest:match("^%((%d+)/(%d+)%) ")
	local linktype, link
	if rest:match(" %-%- fallback to interpreter$") then
		linktype, link = "interpreter", 0
	else
		link, linktype = rest:match(" %-> (%d+) (%S+)$")
		if not link then
			link = rest:match(" %-> (%d+)$")
			linktype = link and "root" or rest:match(" (%S+)$")
		end
		-- no "->": linked to itself (a loop) or to nothing
		if not link and linktype == "loop" then link = traceno end
	end
	trace_event("start", traceno, nil, tonumber(parent), tonumber(exitno))
	return trace_event("stop", traceno, nil, nil, nil, linktype, tonumber(link) or 0)
end

-- What -jv has written (it flushes every line) since the last call.
local jv_file = mode and mode:match("^jv=(.*)$")
local jv = jv_file and assert(io.open(jv_file, "r"))
local function read_jv()
	if not jv then return end
	jv:seek("cur") -- clears the end of file seen last time
	for line in jv:lines() do jv_line(line) end
end

jit.attach(function(traceno, exitno)
	read_jv() -- the trace events before this exit
	local key = flushes .. " " .. traceno .. " " .. exitno
	counts[key] = (counts[key] or 0) + 1
	if side_of[key] then after[key] = (after[key] or 0) + 1 end
end, "texit")
if not jv then
	jit.attach(function(what, traceno, func, pc, parent, exitno)
		trace_event(what, traceno, func, parent, exitno)
	end, "trace")
end
if mode == "require-jitflow" then require("jitflow") end
dofile(prog)
jit.off() -- no trace of this file's own loop below (its exits would not be counted)
read_jv()
assert(not unknown_jv_line, "-jv wrote a line not understood: " .. tostring(unknown_jv_line))
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
