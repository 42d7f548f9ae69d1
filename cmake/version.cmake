# Writes OUT from IN with the version of the sources in SRC (git describe), at every build: a binary
# names the commit it was built from, not the one its build folder was configured at. configure_file
# leaves OUT untouched when nothing changed, so an unchanged commit rebuilds nothing.
execute_process(COMMAND git describe --always --dirty --abbrev=10 WORKING_DIRECTORY ${SRC}
                OUTPUT_VARIABLE HPT_GIT_VERSION OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT HPT_GIT_VERSION)
  set(HPT_GIT_VERSION "unknown")
endif()
configure_file(${IN} ${OUT} @ONLY)
