#!/bin/sh
# A C++ compiler that appends one line per invocation to $TANDEM_TEST_CXX_LOG
# and runs the system compiler, so a test can count compilations.
echo "$*" >> "$TANDEM_TEST_CXX_LOG"
exec c++ "$@"
