-- A program for LuaJIT's interpreter alone (run with -joff): run k of 8 marks an iteration
-- for jitflow (a no-op without it) and runs a numeric loop of k * 1000 trips, each the
-- same two bytecodes (ADDVV, FORL) that allocate nothing. So each run costs the one before
-- it plus 1000 trips, exactly, and all of that is the interpreter's bytecode handlers.
-- Prints the number of runs, the trips and the sum, the same with and without jitflow.
local jitflow = package.loaded.jitflow
local iteration = jitflow and jitflow.iteration or function() end
local runs, trips, x = 8, 0, 0
for run = 1, runs do
	iteration(run)
	for i = 1, run * 1000 do x = x + i end
	trips = trips + run * 1000
end
print(runs, trips, x)
