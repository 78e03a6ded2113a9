-- wrk script: one stateless MCP tools/call get_products per request.
--   wrk -t2 -c64 -d10s --latency -s testdata/get_products.lua http://127.0.0.1:3101/mcp
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.body = [[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_products","arguments":{"adcp_version":"3.1","buying_mode":"brief","brief":"video for a coffee launch","filters":{"channels":["olv"],"budget_range":{"max":5000,"currency":"USD"}},"pagination":{"max_results":5},"context":{"n":1}}}}]]

local bad = 0
function response(status, headers, body)
  if status ~= 200 or not string.find(body, '"products":%[{', 1, false) then
    bad = bad + 1
  end
end

function done(summary, latency, requests)
  io.write(string.format("responses without products: %d\n", bad))
end
