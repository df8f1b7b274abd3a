-- A benchmark that marks each run of its outer loop as an iteration for jitflow (a no-op
-- without jitflow): 12 runs of the same inner loop, which LuaJIT compiles during the
-- first. Prints the runs' sum, the same with and without jitflow.
local jitflow = package.loaded.jitflow
local iteration = jitflow and jitflow.iteration or function() end
local runs, s = 12, 0
for run = 1, runs do
	iteration(run)
	for i = 1, 500 do s = s + i % 7 end
end
print(runs, s)
