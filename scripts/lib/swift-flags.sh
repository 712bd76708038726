# The flags of every debug `swift build` and `swift test` the scripts and the Makefile run:
# one list, because SwiftPM rebuilds every module when two calls differ in them.
#
# No debug info (-gnone): a cold `swift build --build-tests` on this project's 2-core CI took
# 822 s with it and 654 s without (session 24). Failing tests still name their file and line
# (#fileID and #line, not DWARF); a crash's backtrace names functions but not lines. For a
# debugger, set LR_SWIFT_FLAGS to the flags wanted (empty for SwiftPM's defaults) and expect
# one full rebuild each time it changes.
# shellcheck disable=SC2206  # the setting is a list of words
SWIFT_FLAGS=(${LR_SWIFT_FLAGS--Xswiftc -gnone})
