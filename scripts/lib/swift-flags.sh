# The flags of every debug `swift build` and `swift test` the scripts and the Makefile run:
# one list, because SwiftPM rebuilds every module when two calls differ in them.
#
# No debug info (-gnone): binaries a quarter smaller and less to write. Its effect on a cold
# `swift build --build-tests` is not settled: 654 s in one quiet run against 822 s with debug
# info (session 23's CI), but 830-858 s in session 24's CI runs, on a slower host; both
# builds still need timing in one quiet hour. Failing tests still name their file and line
# (#fileID and #line, not DWARF); a crash's backtrace names functions but not lines. For a
# debugger, set LR_SWIFT_FLAGS to the flags wanted (empty for SwiftPM's defaults) and expect
# one full rebuild each time it changes.
# shellcheck disable=SC2206  # the setting is a list of words
SWIFT_FLAGS=(${LR_SWIFT_FLAGS--Xswiftc -gnone})
