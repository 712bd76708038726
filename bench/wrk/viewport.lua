dofile(os.getenv("BENCH_DIR") .. "/wrk/common.lua")
-- Notes in a ~10 x 10 km viewport of a random city.
request = function()
    return wrk.format("GET", "/v1/notes?bbox=" .. city_bbox(), auth_headers)
end
