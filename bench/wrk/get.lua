dofile(os.getenv("BENCH_DIR") .. "/wrk/common.lua")
-- One note by id (ids of the bench tenant; private notes of others answer 404 here and in pgbench alike).
local lo = tonumber(os.getenv("BENCH_NOTE_MIN") or "1")
local hi = tonumber(os.getenv("BENCH_NOTE_MAX") or "1")
request = function()
    return wrk.format("GET", "/v1/notes/" .. math.random(lo, hi), auth_headers)
end
