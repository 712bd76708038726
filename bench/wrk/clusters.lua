dofile(os.getenv("BENCH_DIR") .. "/wrk/common.lua")
-- Clusters at zoom 10 over a ~10 x 10 km viewport of a random city.
request = function()
    return wrk.format("GET", "/v1/notes/clusters?zoom=10&bbox=" .. city_bbox(), auth_headers)
end
