dofile(os.getenv("BENCH_DIR") .. "/wrk/common.lua")
-- The cheapest route (no database, no token): what HTTP alone costs the service per request.
request = function()
    return wrk.format("GET", "/healthz")
end
