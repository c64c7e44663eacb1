-- settle_main.lua, as one script: see there.
return settle_main(KEYS, ARGV)
