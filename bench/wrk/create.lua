dofile(os.getenv("BENCH_DIR") .. "/wrk/common.lua")
-- Create one note near a random city.
local headers = { ["Authorization"] = auth_headers["Authorization"], ["Content-Type"] = "application/json" }
request = function()
    local lat, lng = random_point()
    local body = string.format('{"body": "benchmark note: coffee by the harbour %d", "lat": %.5f, "lng": %.5f}',
        math.random(1, 1000000), lat, lng)
    return wrk.format("POST", "/v1/notes", headers, body)
end
