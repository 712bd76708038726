dofile(os.getenv("BENCH_DIR") .. "/wrk/common.lua")
-- Text search, half a common word (coffee), half a rare one (axolotl), newest first.
local words = { "coffee", "axolotl" }
request = function()
    return wrk.format("GET", "/v1/notes?q=" .. words[math.random(1, 2)] .. "&limit=50", auth_headers)
end
