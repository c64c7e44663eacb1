-- What both batch scripts answer per call: its script's reply as one line of integers ('%d': t
-- and the states are µs beyond %.14g), each format made once per script call.
local formats = {}

local function line(reply)
  local format = formats[#reply]
  if not format then
    format = string.rep('%d ', #reply - 1) .. '%d'
    formats[#reply] = format
  end
  return string.format(format, unpack(reply))
end
