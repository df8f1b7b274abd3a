-- Listening to a LuaJIT VM event beside the program's own handler.
--
-- LuaJIT keeps one handler per VM event: jit.attach(f, "trace") replaces whatever was
-- attached to "trace", and jit.attach(f) detaches f from every event. -jv, -jdump and
-- profilers attach their own "trace" handler, so a plain jit.attach from jitflow's module
-- would lose the program's handler, or lose its own to the program's. Instead, listen()
-- attaches one function per event that calls jitflow's handler first and then the
-- program's, and replaces jit.attach (in the jit table that require("jit") returns, the
-- one -jv and -jdump call) with a function that, for such an event, keeps the program's
-- handler behind jitflow's instead of replacing it:
--   * jit.attach(f, event) makes f the program's handler of that event (replacing the one
--     before, as LuaJIT would);
--   * jit.attach(f) detaches f from every event, that one included; jitflow's own
--     function is never detached;
--   * the program's handler is called with the event's arguments, as LuaJIT calls it; an
--     error in it is reported by LuaJIT as any handler's error is ("VM handler failed");
--     an error in jitflow's handler is reported on stderr and the program's still runs.
-- A handler the program attached before listen() is found where LuaJIT keeps handlers
-- (the registry's _VMEVENTS table) and kept the same way.
--
-- Limit: a program that kept LuaJIT's own jit.attach from before listen() (local attach =
-- jit.attach) and calls it for the same event replaces jitflow's function.
local M = {}

local attach = jit.attach  -- LuaJIT's own; named "attach" as in LuaJIT's error messages
local ours = {}            -- event -> jitflow's handler
local theirs = {}          -- event -> the program's handler, or nil
local chained = {}         -- event -> the function attached to it (ours, then theirs)
local is_chained = {}      -- those functions, as keys

local function warn(fmt, ...)
	io.stderr:write("jitflow.lua: ", string.format(fmt, ...), "\n")
end

-- LuaJIT's own argument checks, with its messages, located at the program's call.
local function check_arguments(nargs, f, event)
	if type(f) ~= "function" then
		error(string.format("bad argument #1 to 'attach' (function expected, got %s)",
				    nargs < 1 and "no value" or type(f)), 3)
	end
	if event ~= nil and type(event) ~= "string" and type(event) ~= "number" then
		error(string.format("bad argument #2 to 'attach' (string expected, got %s)",
				    type(event)), 3)
	end
end

local function attach_keeping_ours(...)
	local f, event = ...
	check_arguments(select("#", ...), f, event)
	if event == nil then
		if is_chained[f] then return end
		for name, handler in pairs(theirs) do
			if handler == f then theirs[name] = nil end
		end
		return attach(f)
	end
	if ours[event] then
		theirs[event] = f
		return
	end
	return attach(f, event)
end

-- The function that stands in the event's slot: jitflow's handler, then the program's.
local function chain(event)
	return function(...)
		local ok, err = pcall(ours[event], ...)
		if not ok then warn("%s handler: %s", event, tostring(err)) end
		local handler = theirs[event]
		if handler then return handler(...) end
	end
end

-- Attach fn to LuaJIT's VM event `event` (a string), ahead of the program's handler.
-- Returns the handler the program had attached before, if any.
function M.listen(event, fn)
	assert(not ours[event], "already listening to " .. event)
	local registry = debug.getregistry()
	local before = {}
	for key, handler in pairs(registry._VMEVENTS or {}) do before[key] = handler end
	ours[event] = fn
	chained[event] = chain(event)
	is_chained[chained[event]] = true
	attach(chained[event], event)
	local found = false
	for key, handler in pairs(registry._VMEVENTS or {}) do
		if handler == chained[event] then
			theirs[event] = before[key]
			found = true
		end
	end
	if not found then
		warn("LuaJIT keeps its handlers elsewhere: a %s handler attached before jitflow's "
		     .. "module is not called any more", event)
	end
	jit.attach = attach_keeping_ours
	return theirs[event]
end

return M
