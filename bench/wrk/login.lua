dofile(os.getenv("BENCH_DIR") .. "/wrk/common.lua")
-- Log in as a random generated user (all share one scrypt hash at the service's default cost).
local names = { "kim","lee","alex","sam","maria","john","ana","li","wei","omar","fatima","noah","emma","lucas","mia","yuki","raj","sofia","ivan","chen" }
local users = tonumber(os.getenv("BENCH_USERS") or "1000")
local password = os.getenv("BENCH_PASSWORD") or ""
local headers = { ["X-Tenant"] = "bench", ["Content-Type"] = "application/json" }
request = function()
    local g = math.random(1, users)
    local body = string.format('{"username": "%s.%d", "password": "%s"}', names[(g % 20) + 1], g, password)
    return wrk.format("POST", "/v1/auth/login", headers, body)
end
