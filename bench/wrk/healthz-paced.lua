dofile(os.getenv("BENCH_DIR") .. "/wrk/common.lua")
-- /healthz paced like a database-bound route: each connection waits BENCH_DELAY_MS
-- between requests, so the service sees the same request rate with idle gaps.
local pause = tonumber(os.getenv("BENCH_DELAY_MS") or "48")
request = function()
    return wrk.format("GET", "/healthz")
end
delay = function()
    return pause
end
