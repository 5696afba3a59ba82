-- wrk script of `scripts/fleet.sh api-bench`: GET /api/v1/eligibility/{user_id} with a bearer
-- token, over the users usr_00000000 .. usr_{API_BENCH_USERS - 1}.
--   API_BENCH_MODE=sequential: each thread walks its share of the users in order (first reads:
--   cache misses served from PostgreSQL, then cached); random: any user, uniformly.
local token = os.getenv("API_BENCH_TOKEN")
local users = tonumber(os.getenv("API_BENCH_USERS") or "100000")
local sequential = os.getenv("API_BENCH_MODE") == "sequential"
local threads = tonumber(os.getenv("API_BENCH_THREADS") or "2")
local created = 0

function setup(thread)
  thread:set("offset", created)
  created = created + 1
end

function init(args)
  wrk.headers["Authorization"] = "Bearer " .. token
  next_user = offset
  math.randomseed(17 + offset)
end

function request()
  local id
  if sequential then
    -- thread t reads users t, t + threads, t + 2 threads, ...
    id = next_user % users
    next_user = next_user + threads
  else
    id = math.random(0, users - 1)
  end
  return wrk.format("GET", string.format("/api/v1/eligibility/usr_%08d", id))
end

