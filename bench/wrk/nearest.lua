dofile(os.getenv("BENCH_DIR") .. "/wrk/common.lua")
-- Nearest 50 within 10 km of a random point near a random city.
request = function()
    local lat, lng = random_point()
    return wrk.format("GET", string.format("/v1/notes?near=%.5f,%.5f&radius_m=10000&limit=50", lat, lng), auth_headers)
end
