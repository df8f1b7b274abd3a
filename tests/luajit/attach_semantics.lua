-- jit.attach as LuaJIT documents it, with jitflow's vmevents.lua listening to "trace":
--   luajit -Ohotloop=8 attach_semantics.lua     (LUA_PATH finding jitflow/vmevents.lua)
-- LuaJIT keeps one handler per event: jit.attach(f, event) replaces the one before,
-- jit.attach(f) detaches f from every event. Each step runs a new loop (so LuaJIT records
-- and compiles a new trace: "trace" events) and checks who saw them. jitflow's stand-in
-- handler must see every event, each before the program's handler, which gets the same
-- arguments; the program's handlers must see exactly what LuaJIT's rules say. Prints one
-- line per step; any difference is an error (exit status 1).
jit.off(true, true) -- no trace of this file's own loops: only the workloads' traces
local calls = {}    -- handler name -> events it saw, as strings of their arguments
local order = {}    -- "name" per call, in the order of the calls

local function record(name)
	return function(...)
		local args = { ... }
		for i = 1, select("#", ...) do args[i] = tostring(args[i]) end
		calls[name] = calls[name] or {}
		table.insert(calls[name], table.concat(args, " "))
		order[#order + 1] = name
	end
end

local function seen(name) return calls[name] and #calls[name] or 0 end

-- A loop LuaJIT compiles into a trace of its own (a new function each time).
local function workload()
	local f = loadstring("local s = 0 for i = 1, 100 do s = s + i end return s")
	return f()
end

-- Each of the program's handlers that should see this step's events got exactly jitflow's
-- events, each call right after jitflow's; the others got none.
local function step(what, should_see, should_not_see)
	local before = {}
	for _, name in ipairs({ "jitflow", "first", "second", "failing", "texit" }) do
		before[name] = seen(name)
	end
	order = {}
	workload()
	local n = seen("jitflow") - before.jitflow
	assert(n > 0, what .. ": no trace event")
	for _, name in ipairs(should_see) do
		assert(seen(name) - before[name] == n, string.format("%s: %s saw %d events, jitflow %d",
		       what, name, seen(name) - before[name], n))
		for k = 1, n do
			assert(calls[name][before[name] + k] == calls.jitflow[before.jitflow + k],
			       what .. ": " .. name .. " got other arguments than jitflow")
		end
	end
	for _, name in ipairs(should_not_see or {}) do
		assert(seen(name) == before[name], what .. ": " .. name .. " still called")
	end
	if #should_see > 0 then
		for k = 1, #order, 2 do
			assert(order[k] == "jitflow", what .. ": " .. order[k] .. " called before jitflow")
		end
	end
	print(string.format("%s: %d trace events", what, n))
end

-- LuaJIT's own messages for bad arguments, without the location.
local function message(...)
	local ok, err = pcall(function(...) jit.attach(...) end, ...)
	assert(not ok)
	return (err:gsub("^[^:]*:%d+: ", ""))
end
local bad = { { 1, "trace" }, {}, { print, {} } }
local luajit_says = {}
for i, args in ipairs(bad) do luajit_says[i] = message(unpack(args)) end

local first, second = record("first"), record("second")
jit.attach(first, "trace")
local vmevents = require("jitflow.vmevents")
assert(vmevents.listen("trace", record("jitflow")) == first, "the handler attached before is not found")
step("attached before", { "first" })

jit.attach(second, "trace")
step("another attached after: it replaces the one before", { "second" }, { "first" })

jit.attach(second)
step("detached with jit.attach(f)", {}, { "first", "second" })

-- what stands in LuaJIT's slot for "trace" is jitflow's: detaching it does nothing
for _, handler in pairs(debug.getregistry()._VMEVENTS) do jit.attach(handler) end
step("detaching what is in LuaJIT's registry", {})

local failing = record("failing")
jit.attach(function(...) failing(...) error("the program's handler fails") end, "trace")
step("a handler that fails (LuaJIT reports it on stderr)", { "failing" })
jit.attach(first, "trace")
step("replaced by one that does not", { "first" }, { "failing" })

-- other events are LuaJIT's own business
local texit = record("texit")
jit.attach(texit, "texit")
loadstring("local s = 0 for i = 1, 100 do if i > 50 then s = s - 1 else s = s + 1 end end")()
assert(seen("texit") > 0, "no texit event")
jit.attach(texit)
local exits = seen("texit")
loadstring("local s = 0 for i = 1, 100 do if i > 50 then s = s - 2 else s = s + 2 end end")()
assert(seen("texit") == exits, "texit handler still called after jit.attach(f)")
print(string.format("texit: %d events, none after jit.attach(f)", exits))

for i, args in ipairs(bad) do
	assert(message(unpack(args)) == luajit_says[i], string.format(
	       "bad arguments: '%s', LuaJIT says '%s'", message(unpack(args)), luajit_says[i]))
end
print("bad arguments: LuaJIT's messages")
