-- Shared by every bench/wrk/*.lua: the token, the cities, a random point near
-- one, and done() printing one parseable RESULT line.
-- Environment: BENCH_TOKEN, BENCH_OP, BENCH_CONNS, BENCH_USERS, BENCH_NOTE_MIN, BENCH_NOTE_MAX.
local cities = {{51.5074, -0.1278}, {48.8566, 2.3522}, {40.7128, -74.0060}, {35.6762, 139.6503}, {-33.8688, 151.2093}, {-37.8136, 144.9631}, {52.5200, 13.4050}, {40.4168, -3.7038}, {41.9028, 12.4964}, {52.3676, 4.9041}, {41.3874, 2.1686}, {38.7223, -9.1393}, {53.3498, -6.2603}, {59.3293, 18.0686}, {59.9139, 10.7522}, {55.6761, 12.5683}, {48.2082, 16.3738}, {50.0755, 14.4378}, {52.2297, 21.0122}, {41.0082, 28.9784}, {30.0444, 31.2357}, {-1.2921, 36.8219}, {-33.9249, 18.4241}, {6.5244, 3.3792}, {25.2048, 55.2708}, {19.0760, 72.8777}, {28.7041, 77.1025}, {13.7563, 100.5018}, {1.3521, 103.8198}, {22.3193, 114.1694}, {37.5665, 126.9780}, {39.9042, 116.4074}, {31.2304, 121.4737}, {14.5995, 120.9842}, {-6.2088, 106.8456}, {-36.8485, 174.7633}, {34.0522, -118.2437}, {37.7749, -122.4194}, {47.6062, -122.3321}, {41.8781, -87.6298}, {43.6532, -79.3832}, {49.2827, -123.1207}, {19.4326, -99.1332}, {-23.5505, -46.6333}, {-34.6037, -58.3816}, {-12.0464, -77.0428}, {4.7110, -74.0721}, {-33.4489, -70.6693}, {21.3069, -157.8583}, {64.1466, -21.9426}}
local token = os.getenv("BENCH_TOKEN") or ""
auth_headers = { ["Authorization"] = "Bearer " .. token }
local thread_counter = 0

function setup(thread)
    thread_counter = thread_counter + 1
    thread:set("seed", thread_counter * 7919 + os.time())
end

function init(args)
    math.randomseed(seed or os.time())
end

-- A random city, and a point up to ~4.5 km from its centre (pgbench draws the same way).
function random_city()
    return cities[math.random(1, #cities)]
end

function random_point()
    local c = random_city()
    local lat = c[1] + math.random(-5000, 5000) / 111320.0
    local lng = c[2] + math.random(-5000, 5000) / (111320.0 * math.cos(math.rad(c[1])))
    return lat, lng
end

-- A viewport of about 10 x 10 km around a city centre.
function city_bbox()
    local c = random_city()
    local dlat = 0.045
    local dlng = 0.045 / math.cos(math.rad(c[1]))
    return string.format("%.5f,%.5f,%.5f,%.5f", c[2] - dlng, c[1] - dlat, c[2] + dlng, c[1] + dlat)
end

function done(summary, latency, requests)
    local seconds = summary.duration / 1e6
    local errors = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
    io.write(string.format(
        "RESULT op=%s conns=%s requests=%d rps=%.1f p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f max_ms=%.3f non2xx=%d socket_errors=%d\n",
        os.getenv("BENCH_OP") or "?", os.getenv("BENCH_CONNS") or "?", summary.requests, summary.requests / seconds,
        latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000, latency.max / 1000,
        summary.errors.status, errors))
end
