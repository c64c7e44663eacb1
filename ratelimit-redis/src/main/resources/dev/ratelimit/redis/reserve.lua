-- reserve_main.lua, as one script: see there.
return reserve_main(KEYS, ARGV)
